import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the sdk plugin: stable, machine-readable, each with one HTTP status. */
export const SdkErrors = defineErrors({
  /** An allowed origin that is not a serialised https origin (http on loopback hosts). */
  INVALID_ORIGIN: { status: 400, message: detail },
  /** An event names another person than the bearer token's. */
  PERSON_MISMATCH: { status: 403, message: detail },
  /**
   * No person token where one is needed, or one that does not validate; answered with
   * `WWW-Authenticate: Bearer` (RFC 6750).
   */
  INVALID_PERSON_TOKEN: { status: 401, message: detail },
  /** The request's Origin is not one of the organization's allowed origins. */
  ORIGIN_NOT_ALLOWED: { status: 403, message: detail },
  TOO_MANY_REQUESTS: { status: 429, message: detail },
});

export type SdkErrorCode = ErrorCodeOf<typeof SdkErrors>;
