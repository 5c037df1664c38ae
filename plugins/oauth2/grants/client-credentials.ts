import { OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import { requestedResource } from '../../../core/tokens/audience.ts';
import type { AccessTokens } from '../tokens/access-tokens.ts';
import { grantedScope } from '../tokens/scopes.ts';

/**
 * The client_credentials grant (RFC 6749 §4.4): a confidential client, authenticated by the token
 * endpoint, gets an access token for itself (sub is its client ID) with the scope it asked for, or all of
 * its scopes, for the resource it asked for (RFC 8707) or its organization's own audience. No refresh token. Nothing is stored: the token is a signed JWT, signed off the event loop's
 * thread (SignOptions.offThread), which the grant, with nothing else to do, leaves to other requests.
 */
export const clientCredentialsGrant = (
  accessTokens: Pick<AccessTokens, 'sign'>,
  publicBaseUrl: string,
): OAuthGrant => ({
  type: 'client_credentials',
  handle({ client, params, dpop }) {
    // Clients are validated so that a public one never lists this grant; this holds if that ever changes.
    if (client.type === 'public')
      throw new OAuthError('unauthorized_client', 'a public client cannot use client_credentials');
    const scope = grantedScope(params.get('scope'), client.scopes);
    const resource = requestedResource(client, params.get('resource'), publicBaseUrl);
    return accessTokens
      .sign(
        {
          client,
          subject: client.clientId,
          scope,
          ...(resource ? { resource } : {}),
          ...(dpop ? { dpopJkt: dpop.jkt } : {}),
        },
        { offThread: true },
      )
      .then(({ token, expiresIn }) => ({
        access_token: token,
        token_type: dpop ? ('DPoP' as const) : ('bearer' as const),
        expires_in: expiresIn,
        scope: scope.join(' '),
      }));
  },
});
