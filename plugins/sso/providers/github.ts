import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { fetchWithToken, noOptions, str } from './common.ts';

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/**
 * GitHub OAuth apps: no ID token, the account comes from the REST API
 * (https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps).
 */
export const github = defineSsoProvider({
  id: 'github',
  displayName: 'GitHub',
  defaultScopes: ['read:user', 'user:email'],
  alwaysScopes: ['read:user', 'user:email'],
  options: noOptions,
  endpoints: {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
    userinfo: 'https://api.github.com/user',
  },
  pkce: true,
  async profile({ accessToken }, { fetch }) {
    const user = await fetchWithToken<Record<string, unknown>>(
      fetch,
      'https://api.github.com/user',
      accessToken,
    );
    // The profile's public email may be unverified or absent: the primary, verified address is the one.
    const emails = await fetchWithToken<GithubEmail[]>(
      fetch,
      'https://api.github.com/user/emails',
      accessToken,
    );
    const primary = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.primary);
    const subject = str(user, 'id');
    if (!subject) throw new Error('GitHub answered a user without an id');
    const name = str(user, 'name') ?? str(user, 'login');
    const picture = str(user, 'avatar_url');
    return {
      subject,
      ...(primary ? { email: primary.email } : {}),
      emailVerified: primary?.verified === true,
      ...(name ? { name } : {}),
      ...(picture ? { picture } : {}),
    };
  },
});
