import {
  DEVICE_CODE_GRANT,
  type OAuth2Server,
  type OAuthClient,
} from '../../../core/capabilities/oauth2-server.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { PendingLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer } from './answer.ts';

/** Where the hosted login answers a device authorization's sign-in (device/routes.ts). */
export const DEVICE_CALLBACK_PATH = '/oauth2/device/callback';

/**
 * Whether a login is a device authorization's sign-in: only the device page opens a login answering
 * there (an authorization request names one of its client's redirect URIs, checked with its grants).
 */
const isDeviceLogin = (redirectUri: string) => URL.parse(redirectUri)?.pathname === DEVICE_CALLBACK_PATH;

/**
 * The login's client as it is now, checked again as the login goes on or finishes: an administrator
 * may have changed it since the authorization request. A client deleted, or the login's redirect URI
 * removed from it, is no longer trusted with a redirect (RFC 6749 §4.1.2.1): an error page, and no
 * code goes there. A client that lost the authorization_code grant hears unauthorized_client at its
 * redirect URI, as the authorization request would have. A device authorization's sign-in answers the
 * device page, not a redirect URI of the client: its client must still have the device_code grant.
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
  if (isDeviceLogin(login.redirectUri) && !client.redirectUris.includes(login.redirectUri)) {
    if (!client.grantTypes.includes(DEVICE_CODE_GRANT))
      throw AuthorizeErrors.INVALID_CLIENT(
        'the client of this device sign-in may no longer use the device grant: start again on the device',
      );
    return client;
  }
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
