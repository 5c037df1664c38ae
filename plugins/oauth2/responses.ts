import { OAuthError, type OAuthErrorCode } from '../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../core/errors.ts';

/** Token endpoint answers must not be cached (RFC 6749 §5.1). */
const NO_STORE = { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' };

/** The realm of the Basic challenge on a 401 (RFC 6749 §5.2, RFC 7617). */
export const REALM = 'oauth2';

/** A success body of the token, introspection or revocation endpoint: bare JSON, never cached. */
export const jsonAnswer = (body: unknown): Response =>
  new Response(JSON.stringify(body), { status: 200, headers: NO_STORE });

/** An empty 200 (revocation, RFC 7009 §2.2). */
export const emptyAnswer = (): Response =>
  new Response(null, { status: 200, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } });

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
): Response {
  const body = {
    errors: [{ httpcode: status, message: description }],
    meta: { cursor_pagination: { limit: 0, cursor: '', total_count: 0 } },
    error,
    error_description: description,
  };
  const headers: Record<string, string> = { ...NO_STORE, ...extra };
  if (status === 401) headers['www-authenticate'] = `Basic realm="${REALM}", charset="UTF-8"`;
  return new Response(JSON.stringify(body), { status, headers });
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
export function answerFor(e: unknown): Response | undefined {
  if (e instanceof OAuthError) return errorAnswer(e.status, e.error, e.description);
  if (e instanceof ServiceError) return errorAnswer(e.status, codeOf(e.status), e.message, e.headers);
  return undefined;
}
