/**
 * User codes (RFC 8628 §6.1): 8 letters from 20 consonants, no vowels (no words) and none that look
 * alike (no I, O, U, Y...), shown as XXXX-XXXX. 20^8 is about 2^34.6: guessing is limited per address
 * at the page, and a code lives minutes.
 */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A fresh user code, unbiased (bytes of 240 and above are drawn again), as shown: XXXX-XXXX. */
export function newUserCode(): string {
  let code = '';
  while (code.length < USER_CODE_LENGTH) {
    for (const byte of crypto.getRandomValues(new Uint8Array(16))) {
      if (byte >= 240 || code.length === USER_CODE_LENGTH) continue;
      code += USER_CODE_ALPHABET[byte % 20];
    }
  }
  return formatUserCode(code);
}

/** XXXXXXXX as XXXX-XXXX. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/**
 * What the person typed, as stored: upper case, dashes and spaces dropped. Undefined when it cannot be
 * a user code (another length, a character outside the alphabet).
 */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > 64) return undefined;
  const code = typed.toUpperCase().replace(/[\s-]/g, '');
  if (code.length !== USER_CODE_LENGTH) return undefined;
  for (const ch of code) if (!USER_CODE_ALPHABET.includes(ch)) return undefined;
  return code;
}
