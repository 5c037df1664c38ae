import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { noOptions, profileFromClaims } from './common.ts';

/** LINE Login v2.1: an OIDC issuer (https://developers.line.biz/en/docs/line-login/verify-id-token/). */
export const line = defineSsoProvider({
  id: 'line',
  displayName: 'LINE',
  defaultScopes: ['openid', 'email', 'profile'],
  alwaysScopes: ['openid', 'email', 'profile'],
  options: noOptions,
  endpoints: { issuer: 'https://access.line.me' },
  pkce: true,
  // LINE puts the address in the ID token only once the person consented to the email permission, and
  // has no email_verified claim: LINE verifies addresses before it shares them.
  profile: async ({ idTokenClaims }) => {
    const profile = profileFromClaims(idTokenClaims);
    return { ...profile, emailVerified: profile.email !== undefined };
  },
});
