import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the sso plugin: stable, machine-readable, each with one HTTP status. */
export const SsoErrors = defineErrors({
  CREDENTIAL_NOT_FOUND: {
    status: 404,
    message: (clientId: string) =>
      `no SSO provider credential with client_id ${JSON.stringify(clientId)} in this organization`,
  },
  CLIENT_ID_TAKEN: {
    status: 409,
    message: (clientId: string) =>
      `body.client_id: this organization already has a credential with client_id ${JSON.stringify(clientId)}; client IDs are unique per organization (modify or delete that one)`,
  },
  UNKNOWN_PROVIDER: {
    status: 400,
    message: (field: string, given: string, accepted: readonly string[]) =>
      `${field}: ${JSON.stringify(given)} is not a provider of this deployment (accepted: ${accepted.join(', ')})`,
  },
  /** An option breaks a rule; the message names options.<provider>.<option> and the rule. */
  INVALID_OPTIONS: { status: 400, message: detail },
});

export type SsoErrorCode = ErrorCodeOf<typeof SsoErrors>;
