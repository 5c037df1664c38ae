import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the password plugin: stable, machine-readable, each with one HTTP status. */
export const PasswordErrors = defineErrors({
  /** The password breaks the policy (length, common password) or the imported hash is not one we know. */
  INVALID_PASSWORD: { status: 400, message: detail },
  /** The body names neither or both of `password` and `password_hash`. */
  INVALID_BODY: { status: 400, message: detail },
  PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `no person ${personId} in this organization`,
  },
  /**
   * A person without a handle (an anonymous person): nobody could sign in with the password, and the
   * PasswordChanged_v1 a password change emits needs the handle.
   */
  PERSON_WITHOUT_HANDLE: {
    status: 409,
    message: (personId: string) =>
      `person ${personId} has no handle (an anonymous person), so a password could never be used to sign in`,
  },
  /** One message for a wrong password, an unknown handle, a person without a password or a disabled one. */
  INVALID_CREDENTIALS: { status: 401, message: 'the handle and password do not match' },
  TOO_MANY_ATTEMPTS: { status: 429, message: detail },
  /** The organization's authentication policy does not list `password` among its first factors. */
  METHOD_NOT_ALLOWED: {
    status: 403,
    message: "the organization's authentication policy does not allow signing in with a password",
  },
  /** A reset token that resets nothing: unknown, expired, used, superseded, or voided by a password change. */
  RESET_TOKEN_REFUSED: { status: 400, message: detail },
  /** The reset form was not sent by the page this browser opened (the double-submit check failed). */
  RESET_FORM_FORBIDDEN: { status: 403, message: detail },
});

export type PasswordErrorCode = ErrorCodeOf<typeof PasswordErrors>;
