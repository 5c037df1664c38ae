import { OAuthError, type OAuthErrorCode } from '../../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../../core/errors.ts';
import { DPoPProofError } from '../dpop/proof.ts';

/** Token endpoint answers must not be cached (RFC 6749 §5.1). */
const NO_STORE = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' };

/** The realm of the Basic challenge on a 401 (RFC 6749 §5.2, RFC 7617). */
export const REALM = 'oauth2';

/**
 * An answer of an OAuth endpoint. The route hands it to Elysia as a string with `set` headers, so one
 * Response is built per request (a returned Response would be copied to merge the request-id header).
 */
export interface OAuthAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** A success body of the token, introspection or revocation endpoint: bare JSON, never cached. */
export const jsonAnswer = (body: unknown): OAuthAnswer => ({
  status: 200,
  body: JSON.stringify(body),
  headers: NO_STORE,
});

/** An empty 200 (revocation, RFC 7009 §2.2). */
export const emptyAnswer = (): OAuthAnswer => ({
  status: 200,
  body: '',
  headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
});

/**
 * An OAuth error as both kinds of client read it: the service's envelope (errors, with
 * meta.cursor_pagination as the spec's token endpoint shows it) and RFC 6749 §5.2's error and
 * error_description in the same body. A 401 carries the Basic challenge, whichever method the client used
 * (RFC 9110 requires WWW-Authenticate on every 401).
 */
export function errorAnswer(
  status: number,
  error: OAuthErrorCode,
  description: string,
  extra: Record<string, string> = {},
): OAuthAnswer {
  const body = {
    errors: [{ httpcode: status, message: description }],
    meta: { cursor_pagination: { limit: 0, cursor: '', total_count: 0 } },
    error,
    error_description: description,
  };
  const headers: Record<string, string> = { ...NO_STORE, ...extra };
  if (status === 401) headers['www-authenticate'] = `Basic realm="${REALM}", charset="UTF-8"`;
  return { status, body: JSON.stringify(body), headers };
}

/** The RFC 6749 code of a ServiceError that reached an OAuth endpoint (a hook's refusal, a rate limit). */
function codeOf(status: number): OAuthErrorCode {
  if (status === 401) return 'invalid_client';
  if (status === 403) return 'access_denied';
  if (status === 429 || status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/** The answer to what an OAuth endpoint threw: OAuth errors and ServiceErrors in the OAuth shape. */
export function answerFor(e: unknown): OAuthAnswer | undefined {
  if (e instanceof OAuthError) return errorAnswer(e.status, e.error, e.description);
  // RFC 9449 §5 and §8: 400, with the nonce to use when that is what was missing.
  if (e instanceof DPoPProofError)
    return errorAnswer(400, e.error, e.message, e.nonce !== undefined ? { 'dpop-nonce': e.nonce } : {});
  if (e instanceof ServiceError) return errorAnswer(e.status, codeOf(e.status), e.message, e.headers);
  return undefined;
}
