import type { SealedColumn } from '../../../core/db/reseal.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';

/** A webhook's custom headers: header name to its values, sent with every delivery. */
export type CustomHeaders = Record<string, string[]>;

/** Bounds on custom headers, so a webhook cannot make every delivery huge. */
export const CUSTOM_HEADER_LIMITS = {
  headers: 32,
  valuesPerHeader: 16,
  nameLength: 256,
  valueLength: 4096,
  totalBytes: 16_384,
} as const;

/**
 * Header fields a webhook may not set: the transport owns framing and connection management (host,
 * content-length, transfer-encoding, connection and the other hop-by-hop fields), and the body is
 * always a JWT (content-type).
 */
export const REFUSED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
]);

/** RFC 9110 token characters: what a field name is made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII, space and tab, not starting or ending with whitespace: safe on every transport. */
const VALUE = /^(?:[\x21-\x7e](?:[\t\x20-\x7e]*[\x21-\x7e])?)?$/;

const kindOf = (value: unknown) =>
  Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;

/**
 * Checks custom headers as they came in the request body; returns the problems, each naming the header
 * and its rule. Names compare case-insensitively, so `X-A` and `x-a` together are a duplicate.
 * `__proto__` is refused: a plain object cannot hold it as a key without care at every step, and no
 * receiver needs it. `constructor` and `prototype` are valid names and are kept (the body is JSON, so
 * every key is an own property).
 */
export function customHeaderProblems(headers: unknown): string[] {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    return [`must be an object of header name to an array of strings (got ${kindOf(headers)})`];
  const problems: string[] = [];
  const names = Object.keys(headers);
  const L = CUSTOM_HEADER_LIMITS;
  if (names.length > L.headers) problems.push(`must have at most ${L.headers} headers (got ${names.length})`);
  const seen = new Set<string>();
  let bytes = 0;
  for (const name of names) {
    const lower = name.toLowerCase();
    const at = JSON.stringify(name);
    if (name === '__proto__') {
      problems.push(`${at} is not accepted as a header name`);
      continue;
    }
    if (!TOKEN.test(name) || name.length > L.nameLength)
      problems.push(
        `${at} is not a valid header name (letters, digits and !#$%&'*+-.^_\`|~, at most ${L.nameLength})`,
      );
    else if (REFUSED_HEADERS.has(lower))
      problems.push(
        `${at} may not be set: the transport owns it (refused: ${[...REFUSED_HEADERS].join(', ')})`,
      );
    if (seen.has(lower)) problems.push(`${at} is given twice (header names are case-insensitive)`);
    seen.add(lower);
    const values = (headers as Record<string, unknown>)[name];
    if (!Array.isArray(values) || values.length === 0) {
      problems.push(`${at} must be a non-empty array of strings`);
      continue;
    }
    if (values.length > L.valuesPerHeader)
      problems.push(`${at} must have at most ${L.valuesPerHeader} values (got ${values.length})`);
    for (const [i, value] of values.entries()) {
      if (typeof value !== 'string') {
        problems.push(`${at}[${i}] must be a string`);
        continue;
      }
      if (value.length > L.valueLength)
        problems.push(`${at}[${i}] must be at most ${L.valueLength} characters`);
      else if (!VALUE.test(value))
        problems.push(
          `${at}[${i}] must be visible ASCII, spaces and tabs, without leading or trailing whitespace`,
        );
      bytes += name.length + value.length + 4;
    }
  }
  if (bytes > L.totalBytes) problems.push(`must total at most ${L.totalBytes} bytes (got ${bytes})`);
  return problems;
}

const contextOf = (webhookId: string) => `webhook:${webhookId}:custom_headers`;

/** The custom headers column, for `secrets reseal`. */
export const customHeadersSealed: SealedColumn = {
  name: 'webhooks.custom_headers',
  table: 'webhooks',
  keys: ['id'],
  column: 'custom_headers',
  context: (row) => contextOf(row.id!),
};

/** Seals headers at rest, bound to their webhook: a sealed value copied to another webhook does not open. */
export async function sealHeaders(
  secrets: SecretBox,
  webhookId: string,
  headers: CustomHeaders | null | undefined,
): Promise<string | null> {
  if (!headers || Object.keys(headers).length === 0) return null;
  return secrets.seal(JSON.stringify(headers), contextOf(webhookId));
}

/**
 * Opens sealed headers. Opening costs an AES-GCM decryption, and deliveries open the same few values
 * again and again, so recent answers are remembered (keyed by the sealed text, which changes whenever
 * the headers do).
 */
export function createHeaderOpener(secrets: SecretBox, limit = 4096) {
  const cache = new Map<string, CustomHeaders>();
  return async (webhookId: string, sealed: string | null): Promise<CustomHeaders | undefined> => {
    if (sealed === null) return undefined;
    const key = `${webhookId}\n${sealed}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const headers = JSON.parse(await secrets.open(sealed, contextOf(webhookId))) as CustomHeaders;
    if (cache.size >= limit) cache.clear();
    cache.set(key, headers);
    return headers;
  };
}
