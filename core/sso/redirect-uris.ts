/**
 * Where a provider sends the browser back for one SSO credential. Each credential has redirect URIs of
 * its own, named by its random `callback_id`, so the path says which credential a provider answered
 * (RFC 9700 section 4.4: a shared callback lets one organization's provider be sent another's code).
 */

/** SSO sign-in (GET /sso/oidc/start): the provider's answer comes back to `/sso/oidc/callback/{id}`. */
export const SIGN_IN_CALLBACK_PATH = '/sso/oidc/callback';

/** The hosted login's SSO buttons: the provider's answer comes back to `/oauth2/authorize/sso/callback/{id}`. */
export const HOSTED_LOGIN_CALLBACK_PATH = '/oauth2/authorize/sso/callback';

/**
 * A credential's redirect URI under `path` of the service at `baseUrl` (PUBLIC_BASE_URL). The ID is
 * percent-encoded: callback IDs are random base64url, but a posted answer's path may carry anything, and
 * what it becomes (a Location header) must stay ASCII.
 */
export const credentialRedirectUri = (baseUrl: string, path: string, callbackId: string): string =>
  `${baseUrl}${path}/${encodeURIComponent(callbackId)}`;
