import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the factors plugin: stable, machine-readable, each with one HTTP status. */
export const FactorsErrors = defineErrors({
  /** A body member breaks its rule (the policy's members, the second step's). */
  INVALID_BODY: { status: 400, message: detail },
  /**
   * One answer for an mfa_token that is unknown, of another organization, expired, used, or void after
   * too many failures: none says which.
   */
  MFA_TOKEN_REFUSED: {
    status: 401,
    message: 'the mfa_token is unknown, expired or already used: sign in with the first factor again',
  },
  /** The second factor's check failed (a wrong code, an assertion that does not verify). */
  SECOND_FACTOR_FAILED: { status: 401, message: detail },
  TOO_MANY_ATTEMPTS: { status: 429, message: detail },
  /** The policy does not allow this first factor, or no plugin serves the second factor asked for. */
  FACTOR_NOT_ALLOWED: { status: 403, message: detail },
  /** The policy requires a second factor and the person has none it allows. */
  SECOND_FACTOR_NOT_ENROLLED: {
    status: 403,
    message: (methods: string) =>
      `the organization requires a second factor (one of ${methods}) and this person has none enrolled`,
  },
  PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `no person ${personId} in this organization`,
  },
  CREDENTIAL_NOT_FOUND: {
    status: 404,
    message: (credentialId: string) => `the person has no credential ${credentialId}`,
  },
  /** Deleting it would leave the person unable to sign in under the policy (the last-factor rule). */
  LAST_FIRST_FACTOR: { status: 409, message: detail },
});

export type FactorsErrorCode = ErrorCodeOf<typeof FactorsErrors>;
