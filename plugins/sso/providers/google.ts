import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { noOptions } from './common.ts';

/** Google: an OIDC issuer (https://developers.google.com/identity/openid-connect/openid-connect). */
export const google = defineSsoProvider({
  id: 'google',
  displayName: 'Google',
  defaultScopes: ['openid', 'email', 'profile'],
  alwaysScopes: ['openid', 'email', 'profile'],
  options: noOptions,
  endpoints: { issuer: 'https://accounts.google.com' },
  pkce: true,
});
