import { sha256, toHex } from '../../../core/ids.ts';

/** How many recovery codes a confirmation (or a renewal) hands out. */
export const RECOVERY_CODE_COUNT = 10;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/**
 * A recovery code: 80 random bits as 16 base32 letters and digits in groups of four
 * (`k7pq-2m4x-...`). 80 bits: a stolen table of digests cannot be searched for them.
 */
export function newRecoveryCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out.match(/.{4}/g)!.join('-');
}

/**
 * A recovery code as typed, in the form its digest is made of (lower case, without the dashes or spaces
 * a person may type), or undefined when it cannot be one.
 */
export function normaliseRecoveryCode(typed: string): string | undefined {
  const plain = typed.toLowerCase().replace(/[\s-]/g, '');
  return /^[a-z2-7]{16}$/.test(plain) ? plain : undefined;
}

/** The stored digest of a (normalised) code: bound to its credential, so equal codes differ in storage. */
export const recoveryDigest = async (credentialId: string, normal: string): Promise<string> =>
  toHex(await sha256(`totp-recovery:${credentialId}:${normal}`));
