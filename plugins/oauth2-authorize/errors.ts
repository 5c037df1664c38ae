import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';
import { quoted as shown } from '../../core/text.ts';

/**
 * What the authorization endpoint answers with an HTML page rather than a redirect: problems found
 * before the redirect URI is trusted (RFC 6749 §4.1.2.1), and a login form that cannot be accepted.
 * Userinfo's refusals are envelopes with a WWW-Authenticate challenge (RFC 6750 §3).
 */
export const AuthorizeErrors = defineErrors({
  /** client_id missing, repeated, or no client of this deployment. */
  INVALID_CLIENT: { status: 400, message: detail },
  /** redirect_uri missing, repeated, or not exactly one of the client's. */
  INVALID_REDIRECT_URI: { status: 400, message: detail },
  /**
   * RFC 9126 §4 (invalid_request_uri): a request_uri that names no pushed request of this client (used,
   * expired, another client's, unknown). Never redirected: its redirect URI is not known to be the client's.
   */
  INVALID_REQUEST_URI: { status: 400, message: detail },
  /** The form names no login under way: expired, already finished, or never started. */
  LOGIN_NOT_FOUND: { status: 400, message: detail },
  /** The form did not come from the browser that opened the login (no cookie, another cookie, another origin). */
  LOGIN_FORBIDDEN: { status: 403, message: detail },
  /** The shared SSO callback of before per-credential redirect URIs: retired, it continues nothing. */
  SSO_CALLBACK_RETIRED: { status: 410, message: detail },
  /**
   * The form (or a POSTed authorization request) is not application/x-www-form-urlencoded or cannot be
   * read, or a field is missing or repeated.
   */
  INVALID_FORM: { status: 400, message: detail },
  /** Too many authorization requests from this client address. */
  TOO_MANY_REQUESTS: { status: 429, message: detail },
  /** Userinfo: no bearer token (a bare challenge), or one that is not an active access token of this deployment. */
  INVALID_TOKEN: { status: 401, message: detail },
  /** Userinfo: an Authorization header of the Bearer scheme that does not carry one token (RFC 6750 §3.1). */
  MALFORMED_BEARER: { status: 400, message: detail },
  /** Userinfo: the access token was not granted the openid scope. */
  INSUFFICIENT_SCOPE: { status: 403, message: detail },
  /** Mint: client_id names no client of this organization. */
  MINT_CLIENT_NOT_FOUND: {
    status: 404,
    message: (clientId: string) => `client_id: no OAuth 2.0 client ${shown(clientId)} in this organization`,
  },
  /** Mint: person_id names no person of this organization (never one, or deleted). */
  MINT_PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `person_id: no person ${shown(personId)} in this organization`,
  },
  /** Mint: the person is disabled; enable them first. */
  MINT_PERSON_DISABLED: {
    status: 400,
    message: (personId: string) => `person_id: person ${personId} is disabled and gets no tokens`,
  },
  /** Mint: revoke-all or a password reset revoked the new grant while its tokens were minted. */
  MINT_GRANT_REVOKED: {
    status: 409,
    message: () =>
      'the new grant was revoked while its tokens were minted (revoke-all or a password reset at the same moment): no token is answered; mint again',
  },
  /** Mint: a scope the client may not have, offline_access without the refresh grant, a reserved claim. */
  INVALID_MINT_REQUEST: { status: 400, message: detail },
  /** Sessions API: person_id names no person of this organization (never one, or deleted). */
  SESSION_PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `person_id: no person ${shown(personId)} in this organization`,
  },
  /** Sessions API: session_id names no live sign-in session of the person. */
  SESSION_NOT_FOUND: {
    status: 404,
    message: (sessionId: string) => `session_id: the person has no live sign-in session ${shown(sessionId)}`,
  },
  /** Logout: a parameter breaks its rule (a bad id_token_hint, a post_logout_redirect_uri not registered). */
  INVALID_LOGOUT_REQUEST: { status: 400, message: detail },
  /** Logout: the confirmation did not come from the page this browser was shown (CSRF). */
  LOGOUT_FORBIDDEN: { status: 403, message: detail },
  /** OAuth 2.0 consents API: a path parameter breaks its rule; the message names which. */
  INVALID_CONSENT_REQUEST: { status: 400, message: detail },
  /** OAuth 2.0 consents API: no person of that ID in this organization (another organization's included). */
  CONSENT_PERSON_NOT_FOUND: {
    status: 404,
    message: (personId: string) => `person_id: no person ${shown(personId)} in this organization`,
  },
  /** OAuth 2.0 consents API: the person has given the client no consent (or revoked it already). */
  CONSENT_NOT_FOUND: {
    status: 404,
    message: (clientId: string) => `client_id: the person has no consent for the client ${shown(clientId)}`,
  },
});

export type AuthorizeErrorCode = ErrorCodeOf<typeof AuthorizeErrors>;
