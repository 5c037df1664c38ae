import type { FromOptions, SsoProvider } from '../../../core/sso/define-provider.ts';

/** A URL given by a provider, as a string or made from the credential's options. */
export const resolveUrl = <O>(url: FromOptions<O>, options: O): string =>
  typeof url === 'string' ? url : url(options);

/** The OIDC issuer of a provider for these options, or undefined when its endpoints are given instead. */
export function issuerOf<O>(provider: SsoProvider<string, O>, options: O): string | undefined {
  return 'issuer' in provider.endpoints ? resolveUrl(provider.endpoints.issuer, options) : undefined;
}

export interface AuthorizationRequest<O> {
  provider: SsoProvider<string, O>;
  credential: { clientId: string; options: O; effectiveScopes: readonly string[] };
  /** The service's callback URL, registered with the provider. */
  redirectUri: string;
  state: string;
  /** Sent to OIDC providers (those with an issuer), whose ID token must echo it. */
  nonce?: string;
  /** The PKCE S256 challenge; sent when the provider accepts PKCE. */
  codeChallenge?: string;
  /** The authorization endpoint discovered from the issuer; required for issuer-discovered providers. */
  authorizationEndpoint?: string;
}

/**
 * The URL a sign-in redirects the browser to: the provider's authorization endpoint with response_type
 * code, client_id, redirect_uri, the effective scopes, state, the nonce (OIDC), the PKCE challenge
 * (when the provider accepts it) and the provider's own parameters. Pure: no network, no clock.
 *
 * @example
 * buildAuthorizationUrl({ provider: github, credential, redirectUri, state, codeChallenge })
 * // https://github.com/login/oauth/authorize?response_type=code&client_id=...&scope=read%3Auser+user%3Aemail&...
 */
export function buildAuthorizationUrl<O>(request: AuthorizationRequest<O>): URL {
  const { provider, credential } = request;
  const endpoint =
    'authorization' in provider.endpoints
      ? resolveUrl(provider.endpoints.authorization, credential.options)
      : request.authorizationEndpoint;
  if (!endpoint)
    throw new Error(
      `provider ${provider.id} discovers its authorization endpoint from its issuer: pass authorizationEndpoint`,
    );
  const url = new URL(endpoint);
  const params = url.searchParams;
  params.set('response_type', 'code');
  params.set('client_id', credential.clientId);
  params.set('redirect_uri', request.redirectUri);
  params.set('scope', credential.effectiveScopes.join(' '));
  params.set('state', request.state);
  if (request.nonce !== undefined && 'issuer' in provider.endpoints) params.set('nonce', request.nonce);
  if (provider.pkce && request.codeChallenge !== undefined) {
    params.set('code_challenge', request.codeChallenge);
    params.set('code_challenge_method', 'S256');
  }
  for (const [name, value] of Object.entries(provider.authorizationParams?.(credential.options) ?? {}))
    params.set(name, value);
  return url;
}
