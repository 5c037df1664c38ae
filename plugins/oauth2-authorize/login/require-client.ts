import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { PendingLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer } from './answer.ts';

/**
 * The login's client as it is now, checked again as the login goes on or finishes: an administrator
 * may have changed it since the authorization request. A client deleted, or the login's redirect URI
 * removed from it, is no longer trusted with a redirect (RFC 6749 §4.1.2.1): an error page, and no
 * code goes there. A client that lost the authorization_code grant hears unauthorized_client at its
 * redirect URI, as the authorization request would have.
 */
export async function requireLoginClient(
  server: OAuth2Server,
  login: Pick<PendingLogin, 'orgId' | 'clientId' | 'redirectUri' | 'state' | 'responseMode'>,
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer,
): Promise<OAuthClient | LoginAnswer> {
  const client = await server.client(login.clientId);
  if (!client || client.orgId !== login.orgId)
    throw AuthorizeErrors.INVALID_CLIENT(
      'the client of this sign-in was removed while it was under way: start again from the application',
    );
  if (!client.redirectUris.includes(login.redirectUri))
    throw AuthorizeErrors.INVALID_REDIRECT_URI(
      "this sign-in's redirect_uri was removed from the client while it was under way: start again from the application",
    );
  if (!client.grantTypes.includes('authorization_code'))
    return answer(login, {
      error: 'unauthorized_client',
      error_description: 'the client may no longer use the authorization_code grant',
      state: login.state,
    });
  return client;
}
