import { base64url } from '../../../core/ids.ts';

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export const isVerifier = (v: string): boolean => VERIFIER.test(v);

/** Whether BASE64URL(SHA256(verifier)) is the challenge (RFC 7636 §4.6, S256). */
export async function verifierMatches(verifier: string, challenge: string): Promise<boolean> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const computed = base64url(digest);
  // Both are public once the code is spent, but the comparison costs nothing to make constant.
  if (computed.length !== challenge.length) return false;
  let diff = 0;
  for (let i = 0; i < computed.length; i++) diff |= computed.charCodeAt(i) ^ challenge.charCodeAt(i);
  return diff === 0;
}
