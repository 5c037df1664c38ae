import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the client routes: stable, machine-readable, each with one HTTP status. */
export const OAuth2Errors = defineErrors({
  CLIENT_NOT_FOUND: {
    status: 404,
    message: (clientId: string) =>
      `no OAuth 2.0 client with client_id ${JSON.stringify(clientId.length > 64 ? `${clientId.slice(0, 64)}…` : clientId)} in this organization`,
  },
  /** A field breaks a rule that involves other fields (a public client with client_credentials). */
  INVALID_CLIENT_SETTINGS: { status: 400, message: detail },
  PUBLIC_CLIENT_SECRET: {
    status: 400,
    message: (clientId: string) =>
      `client ${clientId} is public: it has no secret and cannot be given one (create a confidential client instead)`,
  },
});

export type OAuth2ErrorCode = ErrorCodeOf<typeof OAuth2Errors>;
