import { defineErrors, detail, type ErrorCodeOf } from '../../../core/errors.ts';

/**
 * The error codes of SSO sign-in. Start answers them as envelopes; the callback answers them as an
 * envelope only when it cannot trust a redirect URI (no valid state), else it redirects with `error`.
 */
export const SsoSignInErrors = defineErrors({
  /** No credential of this organization has that client ID, or its provider is not registered. */
  UNKNOWN_CLIENT: { status: 404, message: detail },
  /** The redirect URI is not one the organization allows, or not https (loopback excepted). */
  INVALID_REDIRECT_URI: { status: 400, message: detail },
  /** The state is unknown, used or expired. */
  INVALID_STATE: { status: 400, message: detail },
  /** The state was started for another credential than the one the callback's path names. */
  WRONG_CALLBACK: { status: 400, message: detail },
  /** The state was started by another browser: the cookie of GET /sso/oidc/start is missing or another. */
  OTHER_BROWSER: { status: 403, message: detail },
  /** No credential has the callback ID of the path. */
  UNKNOWN_CALLBACK: { status: 404, message: detail },
  /** The shared callback of before per-credential redirect URIs: retired, it redeems nothing. */
  CALLBACK_RETIRED: { status: 410, message: detail },
  /** The provider answered with an error, or could not be reached. */
  PROVIDER_ERROR: { status: 502, message: detail },
});

export type SsoSignInErrorCode = ErrorCodeOf<typeof SsoSignInErrors>;
