import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the TOTP plugin: stable, machine-readable, each with one HTTP status. */
export const TotpErrors = defineErrors({
  /** A path parameter or a body member breaks its rule; the message names which. */
  INVALID_TOTP_INPUT: { status: 400, message: detail },
  /** The code does not confirm the enrolment: not the authenticator's code now, or used already. */
  TOTP_CODE_REFUSED: { status: 400, message: detail },
  /** No person of that ID in this organization (another organization's person included). */
  PERSON_NOT_FOUND: {
    status: 404,
    message: (id: string) => `no person ${id} in this organization`,
  },
  /** An anonymous person: no handle to name the account in the app, and no first factor to sign in with. */
  PERSON_WITHOUT_HANDLE: {
    status: 409,
    message: (id: string) =>
      `person ${id} has no handle (an anonymous person): an authenticator app could not name the account`,
  },
  /** No authenticator of that ID for this person, or an enrolment that lapsed unconfirmed. */
  TOTP_CREDENTIAL_NOT_FOUND: { status: 404, message: detail },
  /** The enrolment is confirmed already (confirm), or not confirmed yet (recovery codes). */
  TOTP_CREDENTIAL_STATE: { status: 409, message: detail },
  TOO_MANY_ATTEMPTS: { status: 429, message: detail },
});

export type TotpErrorCode = ErrorCodeOf<typeof TotpErrors>;
