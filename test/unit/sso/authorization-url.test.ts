import { describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import type { SsoProvider } from '../../../core/sso/define-provider.ts';
import { effectiveScopes } from '../../../plugins/sso/credentials/scopes.ts';
import { builtInProviders } from '../../../plugins/sso/providers/index.ts';
import { buildAuthorizationUrl, issuerOf } from '../../../plugins/sso/signin/authorization-url.ts';
import { appleOptions } from './fixture.ts';

const apple = await appleOptions();

/**
 * Per built-in: its options, its issuer (OIDC) and the authorization endpoint that issuer's discovery
 * document names (so the test runs without network), or the endpoint the provider gives.
 */
const cases: Record<
  string,
  { options: unknown; issuer?: string; endpoint: string; extra?: Record<string, string> }
> = {
  google: {
    options: {},
    issuer: 'https://accounts.google.com',
    endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
  },
  github: { options: {}, endpoint: 'https://github.com/login/oauth/authorize' },
  bitbucket: { options: {}, endpoint: 'https://bitbucket.org/site/oauth2/authorize' },
  gitlab: { options: {}, endpoint: 'https://gitlab.com/oauth/authorize' },
  facebook: { options: {}, endpoint: 'https://www.facebook.com/v19.0/dialog/oauth' },
  line: {
    options: {},
    issuer: 'https://access.line.me',
    endpoint: 'https://access.line.me/oauth2/v2.1/authorize',
  },
  azuread: {
    options: { tenant: 'consumer' },
    issuer: 'https://login.microsoftonline.com/consumers/v2.0',
    endpoint: 'https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize',
  },
  okta: {
    options: { organization_url: 'https://acme.okta.com/' },
    issuer: 'https://acme.okta.com',
    endpoint: 'https://acme.okta.com/oauth2/v1/authorize',
  },
  apple: {
    options: apple.options,
    issuer: 'https://appleid.apple.com',
    endpoint: 'https://appleid.apple.com/auth/authorize',
    extra: { response_mode: 'form_post' },
  },
};

describe('the authorization URL of every built-in provider', () => {
  it('covers the nine built-ins', () => {
    expect(builtInProviders.map((p): string => p.id).sort()).toEqual(Object.keys(cases).sort());
  });

  for (const provider of builtInProviders as readonly SsoProvider[]) {
    it(`${provider.id}: host, path, scopes, state, nonce, PKCE and its own parameters`, () => {
      const c = cases[provider.id]!;
      const options = v.parse(provider.options, c.options);
      expect(issuerOf(provider, options)).toBe(c.issuer);
      const scopes = effectiveScopes(provider, null);
      const url = buildAuthorizationUrl({
        provider,
        credential: { clientId: `client-${provider.id}`, options, effectiveScopes: scopes },
        redirectUri: 'https://ids.test/sso/callback',
        state: 'the-state',
        nonce: 'the-nonce',
        codeChallenge: 'the-challenge',
        ...(c.issuer ? { authorizationEndpoint: c.endpoint } : {}),
      });
      const expected = new URL(c.endpoint);
      expect(`${url.origin}${url.pathname}`).toBe(`${expected.origin}${expected.pathname}`);
      expect(url.protocol).toBe('https:');
      const params = Object.fromEntries(url.searchParams);
      expect(params).toEqual({
        response_type: 'code',
        client_id: `client-${provider.id}`,
        redirect_uri: 'https://ids.test/sso/callback',
        scope: scopes.join(' '),
        state: 'the-state',
        ...(c.issuer ? { nonce: 'the-nonce' } : {}),
        ...(provider.pkce ? { code_challenge: 'the-challenge', code_challenge_method: 'S256' } : {}),
        ...c.extra,
      });
      expect(params.scope!.split(' ')).toEqual(expect.arrayContaining([...provider.alwaysScopes]));
    });
  }

  it('requests the configured scopes and the always-requested ones', () => {
    const [google] = builtInProviders;
    const url = buildAuthorizationUrl({
      provider: google,
      credential: {
        clientId: 'c',
        options: {},
        effectiveScopes: effectiveScopes(google, ['openid', 'https://www.googleapis.com/auth/drive.file']),
      },
      redirectUri: 'https://ids.test/cb',
      state: 's',
      authorizationEndpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
    });
    expect(url.searchParams.get('scope')).toBe(
      'openid https://www.googleapis.com/auth/drive.file email profile',
    );
  });

  it('needs the discovered endpoint for an issuer-discovered provider', () => {
    const [google] = builtInProviders;
    expect(() =>
      buildAuthorizationUrl({
        provider: google,
        credential: { clientId: 'c', options: {}, effectiveScopes: [] },
        redirectUri: 'https://ids.test/cb',
        state: 's',
      }),
    ).toThrow('authorizationEndpoint');
  });
});
