import * as v from 'valibot';

/**
 * UUID v7 (RFC 9562): 48-bit Unix milliseconds, then random bits; time-ordered, so index-friendly.
 * Built on the runtime's native v4 (`crypto.randomUUID`), whose variant bits are v7's too: its first 48
 * bits give way to the time and its version digit to 7, which leaves the 74 random bits v7 asks for.
 * Thirty times faster than filling and hex-encoding 16 bytes in JavaScript (0.1 against 2.6 µs), on a
 * path that makes one for every event, delivery and message.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const random = crypto.randomUUID();
  const time = Math.max(0, Math.floor(nowMs)).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

/**
 * The one UUID rule of the service: the RFC 9562 text form, 8-4-4-4-12 hex digits of any version and
 * either case. Request checks, schemas (`uuidString`) and event payloads all use it.
 */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** @example isUuid('0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b') // true */
export const isUuid = (s: string): boolean => UUID_PATTERN.test(s);

/**
 * A valibot schema of a string that `isUuid` accepts (a `pattern` in the OpenAPI document).
 *
 * @example v.object({ id: uuidString() })
 */
export const uuidString = (message = 'must be a UUID') => v.pipe(v.string(), v.regex(UUID_PATTERN, message));

export function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const x of bytes) s += String.fromCharCode(x);
  return btoa(s).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

export function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replaceAll('-', '+').replaceAll('_', '/'));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

/** A 256-bit random secret, base64url, behind a short prefix that secret scanners can recognise. */
export function randomSecret(prefix: string): string {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return `${prefix}${base64url(b)}`;
}

export async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

export const toHex = (b: Uint8Array): string =>
  Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

/** Compares two byte strings in time that depends only on their length. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
