import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AcmeOptions, acme, createAcmeProvider } from '@identity-service-examples/acme-sso-provider';
import type { ServiceDefinition, SsoEndpoints, SsoProvider } from 'identity-service/core';
import * as v from 'valibot';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService } from '../helpers/service.ts';

const ROOT = join(import.meta.dir, '..', '..');
const PACKAGE = join(ROOT, 'examples', 'acme-sso-provider');

const issuesOf = (input: unknown) => {
  const r = v.safeParse(acme.options, input);
  return r.success ? [] : r.issues.map((i) => i.message);
};

/** The given endpoints of a provider (Acme ID discovers nothing), resolved for one credential's options. */
function endpointsFor<O>(endpoints: SsoEndpoints<O>, options: O) {
  if ('issuer' in endpoints) throw new Error('expected given endpoints, not an issuer');
  const at = (e: string | ((o: O) => string) | undefined) => (typeof e === 'function' ? e(options) : e);
  return {
    authorization: at(endpoints.authorization),
    token: at(endpoints.token),
    userinfo: at(endpoints.userinfo),
  };
}

/** The authorization request a sign-in makes: the provider's endpoint, its parameters, the scopes. */
function authorizationUrl(
  provider: SsoProvider<string, AcmeOptions>,
  options: AcmeOptions,
  scopes: string[],
) {
  const url = new URL(endpointsFor(provider.endpoints, options).authorization!);
  const params = {
    response_type: 'code',
    scope: scopes.join(' '),
    ...provider.authorizationParams?.(options),
  };
  for (const [k, value] of Object.entries(params)) url.searchParams.set(k, value);
  return url;
}

describe('a third-party SSO provider kept outside plugins/ (examples/acme-sso-provider)', () => {
  it('is a plain provider object that fits the registry of every provider', () => {
    const registry: SsoProvider<string, unknown>[] = [acme];
    expect(registry.map((p) => p.id)).toEqual(['acme']);
    expect(acme.displayName).toBe('Acme ID');
    expect(acme.pkce).toBe(true);
    expect(acme.defaultScopes).toEqual(['account:read', 'email', 'avatar']);
    expect(acme.alwaysScopes).toEqual(['account:read', 'email']);
    expect(typeof acme.profile).toBe('function');
    expect('issuer' in acme.endpoints).toBe(false);
  });

  it('accepts a tenant domain, trimmed and lower-cased, and an optional prompt', () => {
    expect(v.parse(acme.options, { domain: ' Example.Acme-ID.com ' })).toEqual({
      domain: 'example.acme-id.com',
    });
    expect(v.parse(acme.options, { domain: 'login.example.org', prompt: 'consent' })).toEqual({
      domain: 'login.example.org',
      prompt: 'consent',
    });
  });

  it.each([
    ['a domain with a scheme', { domain: 'https://example.acme-id.com' }],
    ['a domain with a path', { domain: 'example.acme-id.com/tenant' }],
    ['a domain with a port', { domain: 'example.acme-id.com:8443' }],
    ['a single label', { domain: 'intranet' }],
    ['an IPv4 address', { domain: '10.0.0.1' }],
    ['a localhost name', { domain: 'acme.localhost' }],
    ['a number', { domain: 42 }],
  ])('refuses %s, naming the domain option and its rule', (_, input) => {
    const messages = issuesOf(input);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toStartWith('domain must be the host name of an Acme ID tenant');
  });

  it('refuses options without a domain, or not an object, saying which', () => {
    expect(issuesOf({ prompt: 'login' })).toEqual(['domain is required']);
    expect(issuesOf('example.acme-id.com')).toEqual(['must be an object of Acme ID options']);
  });

  it('refuses a prompt it does not know, naming the option and the values', () => {
    expect(issuesOf({ domain: 'example.acme-id.com', prompt: 'none' })).toEqual([
      'prompt must be one of login, consent',
    ]);
  });

  it("builds every endpoint from the credential's domain", () => {
    const options = v.parse(acme.options, { domain: 'example.acme-id.com' });
    expect(endpointsFor(acme.endpoints, options)).toEqual({
      authorization: 'https://example.acme-id.com/oauth2/authorize',
      token: 'https://example.acme-id.com/oauth2/token',
      userinfo: 'https://example.acme-id.com/api/v2/me',
    });
  });

  it("sends its endpoints to the deployment's origin, never to one a credential chooses", () => {
    const proxied = createAcmeProvider({ origin: (d) => `https://egress.internal/acme/${d}` });
    const options = v.parse(proxied.options, { domain: 'example.acme-id.com' });
    expect(endpointsFor(proxied.endpoints, options).token).toBe(
      'https://egress.internal/acme/example.acme-id.com/oauth2/token',
    );
  });

  it('asks for the effective scopes and the configured prompt in its authorization request', () => {
    const options = v.parse(acme.options, { domain: 'example.acme-id.com', prompt: 'login' });
    // An organization that configured authorize_scopes ['avatar'] still gets the always-requested ones.
    const effective = [...new Set([...['avatar'], ...acme.alwaysScopes])];
    const url = authorizationUrl(acme, options, effective);
    expect(url.origin + url.pathname).toBe('https://example.acme-id.com/oauth2/authorize');
    expect(url.searchParams.get('scope')).toBe('avatar account:read email');
    expect(url.searchParams.get('prompt')).toBe('login');
    const plain = authorizationUrl(acme, v.parse(acme.options, { domain: 'example.acme-id.com' }), []);
    expect(plain.searchParams.has('prompt')).toBe(false);
  });

  it('imports only the public core entry and valibot (its deployment file: the built-in plugins too)', () => {
    const imports = (file: string) =>
      [...readFileSync(join(PACKAGE, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
    const sources = readdirSync(PACKAGE).filter((f) => f.endsWith('.ts'));
    expect(sources).toContain('index.ts');
    for (const file of sources.filter((f) => f !== 'service.config.ts'))
      for (const spec of imports(file))
        expect(
          ['identity-service/core', 'valibot'].includes(spec) || spec.startsWith('./'),
          `${file}: ${spec}`,
        ).toBe(true);
    for (const spec of imports('service.config.ts'))
      expect(/^identity-service\/(core|plugins\/[a-z-]+)$|^\.\//.test(spec), spec).toBe(true);
  });

  it("is accepted by its deployment's sso plugin, its options checked", async () => {
    const configFile = '@identity-service-examples/acme-sso-provider/service.config';
    const deployment: { default: ServiceDefinition } = await import(configFile);
    const t = await startTestService({ definition: deployment.default });
    try {
      const path = '/organizations/sso/oidc/provider-credentials';
      const body = { client_id: 'acme-client', client_secret: 's3cret-acme', provider: 'acme' };
      const created = await t.call('POST', path, {
        body: { ...body, options: { acme: { domain: 'example.acme-id.com' } } },
      });
      await expectStatus(created, 201);
      expect(created.text).not.toContain('s3cret-acme');
      const bad = await t.call('POST', path, {
        body: { ...body, client_id: 'acme-2', options: { acme: { domain: 'https://x' } } },
      });
      await expectStatus(bad, 400);
      expect(bad.text).toContain('domain must be the host name of an Acme ID tenant');
    } finally {
      await t.stop();
    }
  });
});
