import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the email-codes plugin: stable, machine-readable, each with one HTTP status. */
export const EmailCodeErrors = defineErrors({
  /** A body member breaks its rule (the message names it). */
  INVALID_BODY: { status: 400, message: detail },
  /**
   * A code or challenge that signs nobody in: a wrong code, an unknown challenge, an expired or used
   * one. One status, the message saying which, never whether the handle names a person.
   */
  CHALLENGE_REFUSED: { status: 401, message: detail },
  /** The organization's authentication policy does not allow this factor now. */
  FACTOR_NOT_ALLOWED: {
    status: 403,
    message: (method: string) => `method: the organization's authentication policy does not allow ${method}`,
  },
  /** The mfa_token names no pending second step (unknown, expired, used) or one without this factor. */
  MFA_TOKEN_REFUSED: { status: 401, message: detail },
  /** The person has no email address to send a second-factor code to. */
  NO_EMAIL_ADDRESS: { status: 409, message: detail },
  TOO_MANY_ATTEMPTS: { status: 429, message: detail },
});

export type EmailCodeErrorCode = ErrorCodeOf<typeof EmailCodeErrors>;
