import { ServiceError } from '../../../core/errors.ts';
import { OAuth2Errors } from '../errors.ts';

/** RFC 7591 §3.2.2's registration errors, and RFC 6750's invalid_token for the bearer tokens. */
export type RegistrationErrorCode =
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_token'
  | 'too_many_requests';

/** A registration request refused: answered as an RFC 7591 error body, never the service's envelope. */
export class RegistrationError extends Error {
  constructor(
    readonly status: number,
    readonly error: RegistrationErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'RegistrationError';
  }
}

/** A member that breaks its rule: invalid_redirect_uri for redirect_uris, else invalid_client_metadata. */
export const invalidMetadata = (description: string): RegistrationError =>
  new RegistrationError(
    400,
    /^redirect_uris\b/.test(description) ? 'invalid_redirect_uri' : 'invalid_client_metadata',
    description,
  );

/** A missing, unknown, expired, used-up or misplaced bearer token (RFC 6750 §3.1). */
export const invalidToken = (description: string): RegistrationError =>
  new RegistrationError(401, 'invalid_token', description, {
    'www-authenticate': `Bearer error="invalid_token", error_description="${description.replace(/["\\]/g, '')}"`,
  });

/** A limit of open registration reached: 429 with Retry-After. */
export const tooMany = (description: string, retryAfterSeconds: number): RegistrationError =>
  new RegistrationError(429, 'too_many_requests', description, {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });

/**
 * The client rules (shared with POST /oauth2/clients) speak of `body.<member>`; a registration error names
 * the member alone. Other errors go on to the service's handler.
 */
export function fromClientRules(error: unknown): never {
  if (error instanceof ServiceError && error.code === OAuth2Errors.INVALID_CLIENT_SETTINGS.code)
    throw invalidMetadata(error.message.replace(/^body\./, ''));
  throw error;
}

/**
 * The JSON answer of a registration error, never cached: RFC 7591 §3.2.2's error and error_description,
 * and the service's envelope (errors) in the same body, as the token endpoint answers, for both kinds of
 * reader.
 */
export function errorResponse(e: RegistrationError): Response {
  const body = {
    errors: [{ httpcode: e.status, message: e.description }],
    error: e.error,
    error_description: e.description,
  };
  return new Response(JSON.stringify(body), {
    status: e.status,
    headers: {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'www-authenticate, retry-after',
      ...e.headers,
    },
  });
}
