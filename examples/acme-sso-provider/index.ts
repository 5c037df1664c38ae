import { defineSsoProvider } from 'identity-service/core';
import { type AcmeOptions, acmeOptions } from './options.ts';
import { fetchAcmeProfile } from './profile.ts';

export { type AcmeOptions, acmeOptions } from './options.ts';
export { AcmeProfileError, fetchAcmeProfile, type ProfileFetch } from './profile.ts';

/** What a deployment may set about Acme ID; an organization's credential never sets these. */
export interface AcmeProviderConfig {
  /**
   * The origin that serves a tenant's endpoints, from the credential's `domain`. Change it to send
   * Acme ID's traffic through an egress proxy, or to a test double in tests; the deployment chooses
   * it, so an organization cannot point the service at an address of its choosing.
   * @default (domain) => `https://${domain}`
   */
  origin?: (domain: string) => string;
}

/**
 * Makes the Acme ID provider: OAuth 2.0 with PKCE and no OpenID Connect, so there is no ID token to
 * verify; the account comes from Acme ID's userinfo endpoint, read with the access token.
 *
 * @example
 * // service.config.ts
 * sso({ providers: [...builtInProviders, createAcmeProvider({ origin: (d) => `https://egress.internal/${d}` })] })
 */
export function createAcmeProvider(config: AcmeProviderConfig = {}) {
  const origin = config.origin ?? ((domain: string) => `https://${domain}`);
  const userinfo = (o: AcmeOptions) => `${origin(o.domain)}/api/v2/me`;
  return defineSsoProvider({
    id: 'acme',
    displayName: 'Acme ID',
    // `avatar` adds the picture; an organization may configure authorize_scopes without it.
    defaultScopes: ['account:read', 'email', 'avatar'],
    // The service needs the account's id and a confirmed email to find or create the person.
    alwaysScopes: ['account:read', 'email'],
    options: acmeOptions,
    endpoints: {
      authorization: (o: AcmeOptions) => `${origin(o.domain)}/oauth2/authorize`,
      token: (o: AcmeOptions) => `${origin(o.domain)}/oauth2/token`,
      userinfo,
    },
    pkce: true,
    authorizationParams: (o): Record<string, string> => (o.prompt ? { prompt: o.prompt } : {}),
    // Through the service's guarded fetch, never the global one: the URL is built from a tenant's domain.
    profile: (tokens, credential) =>
      fetchAcmeProfile(userinfo(credential.options), tokens.accessToken, credential.fetch),
  });
}

/** The Acme ID provider with its public endpoints: list it in `sso({ providers })`. */
export const acme = createAcmeProvider();
