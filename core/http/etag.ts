import { CoreErrors } from '../errors.ts';
import { base64url, sha256 } from '../ids.ts';

/** An If-Match header as parsed: `*`, or the entity tags it lists (weak ones marked). */
export type IfMatch = { readonly any: true } | { readonly any: false; readonly tags: readonly string[] };

/**
 * A strong ETag of a JSON value: a digest of its JSON text, so the same state gives the same tag on
 * every replica and after a restart, and any change of the state (by whatever route) changes it.
 *
 * @example await strongEtag(['admin', 'viewer']) // '"q3…"'
 */
export const strongEtag = (value: unknown): Promise<string> => etagOfText(JSON.stringify(value));

/** A strong ETag of a body as sent: a digest of its text (18 bytes of SHA-256, base64url, quoted). */
export async function etagOfText(text: string): Promise<string> {
  return `"${base64url((await sha256(text)).subarray(0, 18))}"`;
}

// entity-tag = [ W/ ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / obs-text (RFC 9110 8.8.3).
const ENTITY_TAG = /^\s*((?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*")\s*(?:,|$)/;

/**
 * The request's If-Match (RFC 9110 13.1.1), or undefined when it has none (then nothing is checked).
 * A value that is neither `*` nor a comma-separated list of quoted entity tags is a 400.
 */
export function ifMatchOf(request: Request): IfMatch | undefined {
  const header = request.headers.get('if-match');
  if (header === null) return undefined;
  if (header.trim() === '*') return { any: true };
  const tags: string[] = [];
  let rest = header;
  while (rest.trim() !== '') {
    const m = ENTITY_TAG.exec(rest);
    if (!m)
      throw CoreErrors.INVALID_IF_MATCH(
        `header If-Match: must be * or a comma-separated list of quoted entity tags, such as "abc" (got ${JSON.stringify(header.slice(0, 100))})`,
      );
    tags.push(m[1]!);
    rest = rest.slice(m[0].length);
  }
  if (tags.length === 0)
    throw CoreErrors.INVALID_IF_MATCH('header If-Match: must be * or at least one quoted entity tag');
  return { any: false, tags };
}

/** Whether the condition holds for a resource that exists with this strong ETag (weak tags never match). */
export const ifMatchHolds = (condition: IfMatch, etag: string): boolean =>
  condition.any || condition.tags.includes(etag);

/** Throws the 412 when the condition does not hold; call it where the write will be made, under its lock. */
export function requireIfMatch(condition: IfMatch | undefined, etag: string, what: string): void {
  if (condition && !ifMatchHolds(condition, etag))
    throw CoreErrors.PRECONDITION_FAILED(
      `header If-Match: ${condition.any ? '*' : condition.tags.join(', ')} is not the current ETag of ${what} (${etag}); read it again and retry. Nothing was written`,
    );
}
