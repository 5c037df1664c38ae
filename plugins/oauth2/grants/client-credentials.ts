import { type OAuth2Server, OAuthError, type OAuthGrant } from '../../../core/capabilities/oauth2-server.ts';
import { grantedScope } from '../scopes.ts';

/**
 * The client_credentials grant (RFC 6749 §4.4): a confidential client, authenticated by the token
 * endpoint, gets an access token for itself (sub is its client ID) with the scope it asked for, or all of
 * its scopes. No refresh token. Nothing is stored: the token is a signed JWT.
 */
export const clientCredentialsGrant = (server: Pick<OAuth2Server, 'signAccessToken'>): OAuthGrant => ({
  type: 'client_credentials',
  async handle({ client, params }) {
    // Clients are validated so that a public one never lists this grant; this holds if that ever changes.
    if (client.type === 'public')
      throw new OAuthError('unauthorized_client', 'a public client cannot use client_credentials');
    const scope = grantedScope(params.get('scope'), client.scopes);
    const { token, expiresIn } = await server.signAccessToken({ client, subject: client.clientId, scope });
    return { access_token: token, token_type: 'bearer', expires_in: expiresIn, scope: scope.join(' ') };
  },
});
