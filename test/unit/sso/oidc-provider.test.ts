import { describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import { oidc, oidcProvider } from '../../../plugins/sso/providers/oidc.ts';

const messages = (schema: typeof oidc.options, input: unknown) => {
  const r = v.safeParse(schema, input);
  return r.success ? [] : r.issues.map((i) => i.message);
};

describe('the generic OIDC provider', () => {
  it('asks each credential for an https issuer, with PKCE and openid always requested', () => {
    expect(oidc.id).toBe('oidc');
    expect(oidc.pkce).toBe(true);
    expect(oidc.alwaysScopes).toEqual(['openid']);
    expect(messages(oidc.options, { issuer: 'https://id.acme.example' })).toEqual([]);
    expect(messages(oidc.options, {})[0]).toContain('issuer');
  });

  it('refuses an http issuer, on loopback too, whatever the deployment says', () => {
    expect(messages(oidc.options, { issuer: 'http://id.acme.example' })[0]).toContain('must be an https URL');
    expect(messages(oidc.options, { issuer: 'http://127.0.0.1:9000' })[0]).toContain('https');
    // The old allowance is ignored: every request to a provider passes the https-only address guard.
    const dev = oidcProvider({ id: 'dev', allowLoopbackIssuer: true });
    for (const issuer of ['http://127.0.0.1:9000', 'http://localhost:9000', 'http://id.acme.example'])
      expect(messages(dev.options, { issuer })).toEqual([
        'issuer must be an https URL without credentials, query or fragment',
      ]);
    expect(() =>
      oidcProvider({ id: 'dev', allowLoopbackIssuer: true, issuer: 'http://127.0.0.1:9000' }),
    ).toThrow('issuer must be an https URL');
  });

  it('lists several providers under their own ids, each with a fixed issuer', () => {
    const acme = oidcProvider({ id: 'acme', displayName: 'Acme', issuer: 'https://id.acme.example' });
    expect(acme.id).toBe('acme');
    expect(messages(acme.options, {})).toEqual([]);
    expect(messages(acme.options, { issuer: 'https://other.example' })[0]).toContain(
      'fixed by the deployment',
    );
    const ep = acme.endpoints;
    expect('issuer' in ep && typeof ep.issuer === 'function' && ep.issuer({})).toBe(
      'https://id.acme.example',
    );
  });

  it('refuses a bad id or issuer when the deployment is defined', () => {
    expect(() => oidcProvider({ id: 'Acme IdP' })).toThrow('id must be');
    expect(() => oidcProvider({ id: 'acme', issuer: 'http://id.acme.example' })).toThrow('issuer must be');
  });
});
