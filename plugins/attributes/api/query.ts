import { AttributeErrors, shown } from '../errors.ts';
import { MAX_ATTRIBUTES_PER_REQUEST, Problems } from '../limits.ts';

/** A query value as `application/x-www-form-urlencoded` reads it: `+` is a space, then percent-decoding. */
function decoded(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw AttributeErrors.INVALID_NAMES(
      `${what} is not valid percent-encoding (got ${shown(raw)}): a % must be followed by two hex digits, and the bytes must form UTF-8`,
    );
  }
}

/**
 * The raw values of `param` in the query of `url`, one per occurrence, still percent-encoded. Any other
 * parameter is a 400: a misspelt `?attribute=a` must not turn a delete of one name into a delete of all.
 */
function rawValues(url: string, param: string): string[] {
  const search = new URL(url).search.slice(1);
  const values: string[] = [];
  for (const pair of search.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decoded(rawName, `a query parameter name`);
    if (name !== param)
      throw AttributeErrors.INVALID_NAMES(
        `unknown query parameter ${shown(name)}: the only one accepted here is "${param}"`,
      );
    values.push(eq < 0 ? '' : pair.slice(eq + 1));
  }
  return values;
}

/** What `?param=` given but empty means: every name (a read), or a 400 (a delete, where it would mean all). */
export type EmptyList = 'all' | 'refuse';

/**
 * Reads a comma-separated list of names from the query: `?attributes=a,b`, as the reference writes it
 * (`style: form, explode: false`), and, as an extension, the parameter repeated. Values are split on
 * literal commas before percent-decoding, so a name holding a comma is sent with it as `%2C`. Absent
 * means none named (null); an empty name between commas is a 400, as in the reference.
 */
export function namesFromQuery(
  url: string,
  param: string,
  check: (name: string) => string | null,
  empty: EmptyList,
): string[] | null {
  const raw = rawValues(url, param);
  if (raw.length === 0) return null;
  if (raw.length === 1 && raw[0] === '') {
    if (empty === 'all') return null;
    throw AttributeErrors.INVALID_NAMES(
      `query ${param} is empty: name at least one (?${param}=a,b), or leave the parameter out to delete every attribute of the bucket`,
    );
  }
  const pieces = raw.flatMap((value) => value.split(','));
  const problems = new Problems();
  if (pieces.length > MAX_ATTRIBUTES_PER_REQUEST)
    problems.add(`query ${param} lists ${pieces.length} names; the limit is ${MAX_ATTRIBUTES_PER_REQUEST}`);
  problems.throwIfAny(AttributeErrors.INVALID_NAMES);
  const names = pieces.map((piece) => decoded(piece, `query ${param}`));
  for (const name of names) {
    if (name === '') problems.add(`query ${param} must not list an empty name (a,,b or a trailing comma)`);
    else {
      const bad = check(name);
      if (bad) problems.add(`query ${param}: ${bad}`);
    }
  }
  problems.throwIfAny(AttributeErrors.INVALID_NAMES);
  return [...new Set(names)];
}

/**
 * Refuses a request body of at least one byte. A DELETE names its attributes in the query; a body there
 * comes from a client that put them in the wrong place, and must not read as "delete every attribute".
 */
export async function refuseBody(request: Request): Promise<void> {
  if (!request.body) return;
  const reader = request.body.getReader();
  let sent = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) sent = false;
      if (done || value.byteLength > 0) break;
    }
  } catch {
    // A body that fails to arrive was still sent.
  } finally {
    reader.cancel().catch(() => {});
  }
  if (sent)
    throw AttributeErrors.INVALID_NAMES(
      'DELETE takes no body: name the attributes in the query (?attributes=a,b), or send neither body nor query to delete every attribute of the bucket',
    );
}
