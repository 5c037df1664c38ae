import { randomSecret, sha256, toHex } from '../../../core/ids.ts';

/**
 * A challenge ID: a version 4 UUID (122 random bits), not the time-ordered v7 of other IDs, because it
 * is what the caller that asked holds to finish the sign-in (an email_link is polled with it alone).
 */
export const newChallengeId = (): string => crypto.randomUUID();

/** How a challenge is stored: the SHA-256 of its ID, in hex. */
export const challengeDigest = async (challengeId: string) => toHex(await sha256(challengeId.toLowerCase()));

/** Six uniformly random decimal digits (rejection sampling, so no digit is likelier than another). */
export function sixDigitCode(): string {
  const word = new Uint32Array(1);
  // 4,294,000,000 is the largest multiple of a million below 2^32.
  do crypto.getRandomValues(word);
  while (word[0]! >= 4_294_000_000);
  return String(word[0]! % 1_000_000).padStart(6, '0');
}

/** A code as people type it: spaces and dashes between the digits dropped; undefined when not 6 digits. */
export function normaliseCode(input: string): string | undefined {
  const code = input.replace(/[\s-]/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

/**
 * The stored digest of a code: bound to the challenge's ID, which is not stored, so whoever reads the
 * table cannot try the million codes against it.
 */
export const codeDigest = async (challengeId: string, code: string) =>
  toHex(await sha256(`${challengeId.toLowerCase()}:${code}`));

/** A link's token (256 random bits, base64url) and the digest stored for it. */
export async function newLinkToken(): Promise<{ token: string; digest: string }> {
  const token = randomSecret('');
  return { token, digest: await linkDigest(token) };
}

/** A link token as this service makes them: 43 base64url characters. */
export const LINK_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export const linkDigest = async (token: string) => toHex(await sha256(token));
