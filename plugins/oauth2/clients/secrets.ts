import { constantTimeEqual, randomSecret, sha256, toHex } from '../../../core/ids.ts';

/** Client secrets: `ocs_` and 256 random bits (base64url); the prefix lets secret scanners find leaks. */
export const newClientSecret = (): string => randomSecret('ocs_');

/** The stored form of a secret: its SHA-256 digest, hex. */
export const secretDigest = async (secret: string): Promise<string> => toHex(await sha256(secret));

const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (b) => Number.parseInt(b, 16));

const encoder = new TextEncoder();

/**
 * Checks presented secrets against one client's digest in constant time. A secret that matched once is
 * kept (as the API-key cache does), so the token endpoint's next requests compare bytes without hashing,
 * and are answered at once (a boolean) rather than by a promise.
 */
export function secretChecker(digestHex: string | null) {
  const digest = digestHex === null ? null : fromHex(digestHex);
  let verified: Uint8Array | undefined;
  return (secret: string): boolean | Promise<boolean> => {
    if (digest === null) return false;
    const presented = encoder.encode(secret);
    if (verified && constantTimeEqual(verified, presented)) return true;
    return sha256(secret).then((hash) => {
      if (!constantTimeEqual(digest, hash)) return false;
      verified = presented;
      return true;
    });
  };
}
