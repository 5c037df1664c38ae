import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the passkeys plugin: stable, machine-readable, each with one HTTP status. */
export const PasskeyErrors = defineErrors({
  PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `no person ${personId} in this organization`,
  },
  /**
   * A challenge_id that names no open challenge of this kind here: unknown, used already (each is
   * single use), expired, of another organization, person or ceremony. The message says which field.
   */
  CHALLENGE_REFUSED: { status: 400, message: detail },
  /** A registration response that does not verify (origin, RP ID, challenge, attestation): names the rule. */
  REGISTRATION_REFUSED: { status: 400, message: detail },
  /** The authenticator's credential ID is registered already in this organization. */
  CREDENTIAL_EXISTS: { status: 409, message: detail },
  /** One message for an unknown passkey, a bad signature, a wrong origin or RP, a disabled person. */
  INVALID_CREDENTIALS: { status: 401, message: 'the passkey did not sign this person in' },
  /** The organization's authentication policy does not allow passkeys as a first factor. */
  FACTOR_NOT_ALLOWED: { status: 403, message: detail },
  /** An mfa_token that names no pending second step, or one whose methods leave out webauthn. */
  MFA_TOKEN_REFUSED: { status: 401, message: detail },
  /** A second step asked of a person who has no passkey. */
  NO_PASSKEY: { status: 409, message: detail },
  TOO_MANY_ATTEMPTS: { status: 429, message: detail },
});

export type PasskeyErrorCode = ErrorCodeOf<typeof PasskeyErrors>;
