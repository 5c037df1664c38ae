import * as v from 'valibot';
import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { strictOptions } from './common.ts';

const isHttpsOrigin = (s: string) => {
  if (!URL.canParse(s)) return false;
  const u = new URL(s);
  return u.protocol === 'https:' && u.hostname !== '' && !u.search && !u.hash && !u.username && !u.password;
};

export const oktaOptions = strictOptions(
  {
    organization_url: v.pipe(
      v.string('is required: the https URL of the Okta organization (https://example.okta.com)'),
      v.check(
        isHttpsOrigin,
        'must be an https URL without query, fragment or credentials (https://example.okta.com)',
      ),
      // The issuer of the organization's authorization server is its URL without a trailing slash.
      v.transform((s) => s.replace(/\/+$/, '')),
    ),
  },
  'okta',
);

/** Okta: the organization's authorization server, an OIDC issuer at its organization URL. */
export const okta = defineSsoProvider({
  id: 'okta',
  displayName: 'Okta',
  defaultScopes: ['openid', 'email', 'profile'],
  alwaysScopes: ['openid', 'email', 'profile'],
  options: oktaOptions,
  endpoints: { issuer: (o) => o.organization_url },
  pkce: true,
});
