import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { fetchWithToken, noOptions, str } from './common.ts';

/**
 * GitLab.com OAuth 2.0 applications with the `read_user` scope: no ID token (that needs `openid`), the
 * account comes from the REST API (https://docs.gitlab.com/api/oauth2/).
 */
export const gitlab = defineSsoProvider({
  id: 'gitlab',
  displayName: 'GitLab',
  defaultScopes: ['read_user'],
  alwaysScopes: ['read_user'],
  options: noOptions,
  endpoints: {
    authorization: 'https://gitlab.com/oauth/authorize',
    token: 'https://gitlab.com/oauth/token',
    userinfo: 'https://gitlab.com/api/v4/user',
  },
  pkce: true,
  async profile({ accessToken }, { fetch }) {
    const user = await fetchWithToken<Record<string, unknown>>(
      fetch,
      'https://gitlab.com/api/v4/user',
      accessToken,
    );
    const subject = str(user, 'id');
    if (!subject) throw new Error('GitLab answered a user without an id');
    const email = str(user, 'email');
    const name = str(user, 'name') ?? str(user, 'username');
    const picture = str(user, 'avatar_url');
    return {
      subject,
      ...(email ? { email } : {}),
      // GitLab's primary email is confirmed once confirmed_at is set.
      emailVerified: email !== undefined && typeof user.confirmed_at === 'string',
      ...(name ? { name } : {}),
      ...(picture ? { picture } : {}),
    };
  },
});
