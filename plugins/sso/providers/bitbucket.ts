import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { fetchWithToken, noOptions, str } from './common.ts';

interface BitbucketEmails {
  values: { email: string; is_primary: boolean; is_confirmed: boolean }[];
}

/**
 * Bitbucket Cloud OAuth 2.0 consumers: no ID token, the account comes from the 2.0 API
 * (https://developer.atlassian.com/cloud/bitbucket/oauth-2/).
 */
export const bitbucket = defineSsoProvider({
  id: 'bitbucket',
  displayName: 'Bitbucket',
  defaultScopes: ['account'],
  alwaysScopes: ['account'],
  options: noOptions,
  endpoints: {
    authorization: 'https://bitbucket.org/site/oauth2/authorize',
    token: 'https://bitbucket.org/site/oauth2/access_token',
    userinfo: 'https://api.bitbucket.org/2.0/user',
  },
  pkce: false,
  async profile({ accessToken }, { fetch }) {
    const user = await fetchWithToken<Record<string, unknown>>(
      fetch,
      'https://api.bitbucket.org/2.0/user',
      accessToken,
    );
    const emails = await fetchWithToken<BitbucketEmails>(
      fetch,
      'https://api.bitbucket.org/2.0/user/emails',
      accessToken,
    );
    const primary = emails.values.find((e) => e.is_primary);
    const subject = str(user, 'uuid') ?? str(user, 'account_id');
    if (!subject) throw new Error('Bitbucket answered a user without a uuid');
    const name = str(user, 'display_name');
    return {
      subject,
      ...(primary ? { email: primary.email } : {}),
      emailVerified: primary?.is_confirmed === true,
      ...(name ? { name } : {}),
    };
  },
});
