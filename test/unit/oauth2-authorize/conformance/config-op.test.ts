// OpenID Foundation "Config OP" test plan, by its modules: the discovery document and the key set as a
// relying party (openid-client) reads them, and whether what they say holds at the endpoints.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeProtectedHeader } from 'jose';
import type * as oidc from 'openid-client';
import { expectStatus } from '../../../helpers/expect-status.ts';
import type { MadeClient } from '../fixture.ts';
import { begin, type Conformance, startConformance } from './relying-party.ts';

let c: Conformance;
let client: MadeClient;
let config: oidc.Configuration;

beforeAll(async () => {
  c = await startConformance();
  client = await c.client();
  config = await c.rp(client);
});
afterAll(() => c.stop());

/** The discovery document as served (not as the library keeps it). */
async function document(): Promise<Record<string, unknown>> {
  const res = await fetch(`${c.s.url}/.well-known/openid-configuration`);
  await expectStatus(res, 200);
  expect(res.headers.get('content-type')).toContain('application/json');
  return res.json();
}

describe('OIDC Config OP', () => {
  test('oidcc-discovery-issuer-not-matching-config: issuer is the URL discovery was asked of', async () => {
    // openid-client refuses a document whose issuer is not the one it asked: discovery succeeded.
    expect(config.serverMetadata().issuer).toBe(c.s.url);
    expect((await document()).issuer).toBe(c.s.url);
  });

  test('oidcc-discovery-endpoint-verification: the required members, the endpoints under the issuer', async () => {
    const doc = await document();
    for (const member of [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
    ] as const) {
      expect(typeof doc[member], member).toBe('string');
      expect(String(doc[member]).startsWith(`${c.s.url}/`), member).toBe(true);
    }
    expect(doc.response_types_supported).toContain('code');
    expect(doc.subject_types_supported).toContain('public');
    expect(doc.scopes_supported).toContain('openid');
    expect(doc.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token']),
    );
    expect(doc.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    );
    // OIDC Discovery §3 asks for RS256 in this list; this service signs with ES256 only (a deliberate
    // choice: the Foundation's check for RS256 would warn here).
    expect(doc.id_token_signing_alg_values_supported).toContain('ES256');
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
    for (const claim of ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email'])
      expect(doc.claims_supported, claim).toContain(claim);
  });

  test('oidcc-discovery: the document is public, cacheable and readable from any origin', async () => {
    const res = await fetch(`${c.s.url}/.well-known/openid-configuration`, {
      headers: { origin: 'https://rp.example' },
    });
    await expectStatus(res, 200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
  });

  test('jwks_uri: signing keys only, each with a unique kid, no private member; the ID token kid among them', async () => {
    const res = await fetch(String(config.serverMetadata().jwks_uri));
    await expectStatus(res, 200);
    const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
    expect(keys.length).toBeGreaterThan(0);
    const kids = keys.map((k) => k.kid);
    expect(new Set(kids).size).toBe(keys.length);
    for (const key of keys) {
      expect(typeof key.kid).toBe('string');
      expect(key.kty).toBe('EC');
      expect(key.crv).toBe('P-256');
      if (key.use !== undefined) expect(key.use).toBe('sig');
      if (key.alg !== undefined) expect(key.alg).toBe('ES256');
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'])
        expect(key[secret], secret).toBeUndefined();
    }
    // A token the service signs names one of them.
    const minted = await c.s.call('POST', `/persons/${(await c.person()).personId}/mint-token`, { body: {} });
    await expectStatus(minted, 201);
    expect(kids).toContain(decodeProtectedHeader(minted.json.result).kid);
  });

  test('response_modes_supported: every mode listed is honoured; one not listed is refused', async () => {
    const doc = await document();
    const modes = doc.response_modes_supported as string[];
    expect(modes).toContain('query');
    for (const mode of modes) {
      // No session here: prompt=none is answered login_required, the way the mode says.
      const { url, state } = await begin(config, c.app.redirectUri, { prompt: 'none', response_mode: mode });
      const res = await fetch(url, { redirect: 'manual' });
      if (mode === 'query') {
        // The session's answer, after the request was checked: a 303 as every answer of the login.
        await expectStatus(res, 303);
        const back = new URL(res.headers.get('location')!);
        expect(back.searchParams.get('error'), mode).toBe('login_required');
        expect(back.searchParams.get('state')).toBe(state);
      } else {
        expect(mode).toBe('form_post');
        await expectStatus(res, 200);
        const html = await res.text();
        expect(html).toContain(`action="${c.app.redirectUri}"`);
        expect(html).toContain('name="error" value="login_required"');
      }
    }
    const { url } = await begin(config, c.app.redirectUri, { response_mode: 'fragment' });
    const res = await fetch(url, { redirect: 'manual' });
    await expectStatus(res, 302);
    const back = new URL(res.headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toContain('response_mode');
  });

  test('claims_parameter_supported, when said, is true and the parameter is taken', async () => {
    const doc = await document();
    if (doc.claims_parameter_supported !== undefined) expect(doc.claims_parameter_supported).toBe(true);
    const { url } = await begin(config, c.app.redirectUri, {
      claims: JSON.stringify({ id_token: { email: { essential: true } } }),
    });
    // The login page: the request passed every check.
    await expectStatus(await fetch(url, { redirect: 'manual' }), 200);
  });
});
