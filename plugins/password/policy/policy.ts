import { PasswordErrors } from '../errors.ts';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

const common = new Set(COMMON_PASSWORDS.split('\n'));

/**
 * The password as it is hashed and verified: NFC-normalised, so the same characters typed on two
 * keyboards (a precomposed é or e plus a combining accent) are the same password.
 */
export const normalisePassword = (password: string) => password.normalize('NFC');

/**
 * The policy for a new password: 8 to 256 characters (Unicode code points, after NFC) and not one of
 * about 1,100 common passwords (compared in lower case). Answers the normalised password, or throws a
 * 400 naming the rule.
 */
export function checkNewPassword(password: string): string {
  const normal = normalisePassword(password);
  const length = Array.from(normal).length;
  if (length < MIN_PASSWORD_LENGTH || length > MAX_PASSWORD_LENGTH)
    throw PasswordErrors.INVALID_PASSWORD(
      `password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters (got ${length})`,
    );
  if (common.has(normal.toLowerCase()))
    throw PasswordErrors.INVALID_PASSWORD('password is one of the most common passwords; choose another');
  return normal;
}

/**
 * An imported hash: an argon2id PHC string or a bcrypt hash whose cost is within the limits (HASH_LIMITS,
 * raised to the service's own argon2id parameters), else a 400 naming the parameter and its limit.
 */
export function checkImportedHash(
  encoded: string,
  problemOf: (encoded: string) => string | undefined,
): string {
  const problem = problemOf(encoded);
  if (problem) throw PasswordErrors.INVALID_PASSWORD(problem);
  return encoded;
}
