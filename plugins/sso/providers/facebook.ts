import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { fetchWithToken, noOptions, str } from './common.ts';

const GRAPH = 'https://graph.facebook.com/v19.0';

/**
 * Facebook Login (manual flow): no ID token, the account comes from the Graph API
 * (https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow).
 */
export const facebook = defineSsoProvider({
  id: 'facebook',
  displayName: 'Facebook',
  defaultScopes: ['email', 'public_profile'],
  alwaysScopes: ['email', 'public_profile'],
  options: noOptions,
  endpoints: {
    authorization: 'https://www.facebook.com/v19.0/dialog/oauth',
    token: `${GRAPH}/oauth/access_token`,
    userinfo: `${GRAPH}/me?fields=id,name,email,picture`,
  },
  pkce: false,
  async profile({ accessToken }, { fetch }) {
    const me = await fetchWithToken<Record<string, unknown>>(
      fetch,
      `${GRAPH}/me?fields=id,name,email`,
      accessToken,
    );
    const subject = str(me, 'id');
    if (!subject) throw new Error('Facebook answered a profile without an id');
    const email = str(me, 'email');
    const name = str(me, 'name');
    return {
      subject,
      ...(email ? { email } : {}),
      // The Graph API gives `email` only when the account has a confirmed address.
      emailVerified: email !== undefined,
      ...(name ? { name } : {}),
    };
  },
});
