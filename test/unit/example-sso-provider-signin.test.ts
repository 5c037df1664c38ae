import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createAcmeProvider } from '@identity-service-examples/acme-sso-provider';
import { builtInProviders, sso, ssoSignIn } from 'identity-service/plugins/sso';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { expectStatus } from '../helpers/expect-status.ts';
import { startRecordingIdentityService } from '../helpers/identity-recorder.ts';
import { startRealEntry } from '../helpers/real-entry.ts';
import { fetchTestHost, IDP_HOST, testTls } from '../helpers/tls.ts';

const DOMAIN = 'example.acme-id.com';
const CLIENT = { id: 'acme-app', secret: 'acme-app-secret' };
const APP = 'https://app.example/signed-in';

const ACCOUNTS = {
  ada: { id: 4815162342, email: 'Ada@Example.com', email_verified_at: '2024-03-01T10:00:00Z' },
  bob: { id: 'u-77', email: 'bob@example.com', email_verified_at: null },
};
/** Who signs in at Acme ID next. */
let account: keyof typeof ACCOUNTS = 'ada';
/** Codes Acme ID issued: what each was issued for. */
const codes = new Map<string, { challenge: string; redirectUri: string; account: keyof typeof ACCOUNTS }>();
const tokenRequests: URLSearchParams[] = [];

const s256 = async (verifier: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))).toString(
    'base64url',
  );

/**
 * Acme ID on loopback over https (IDP_HOST, the test certificate), as its documentation describes it: an authorization endpoint that signs the
 * person in at once and redirects back with a code, a token endpoint that checks the client and the
 * PKCE verifier, and the userinfo endpoint. Each tenant's endpoints sit under its domain.
 */
const idp = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  tls: { cert: testTls().certPem, key: testTls().keyPem },
  async fetch(req) {
    const url = new URL(req.url);
    const path = url.pathname.replace(`/${DOMAIN}`, '');
    if (path === '/oauth2/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== CLIENT.id || q.get('code_challenge_method') !== 'S256')
        return new Response('bad authorization request', { status: 400 });
      const code = crypto.randomUUID();
      codes.set(code, {
        challenge: q.get('code_challenge') ?? '',
        redirectUri: q.get('redirect_uri') ?? '',
        account,
      });
      const back = new URL(q.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      return Response.redirect(back.href, 302);
    }
    if (path === '/oauth2/token' && req.method === 'POST') {
      const form = new URLSearchParams(await req.text());
      tokenRequests.push(form);
      const basic = atob((req.headers.get('authorization') ?? '').replace(/^Basic /, '')).split(':');
      const [id, secret] = form.has('client_secret')
        ? [form.get('client_id'), form.get('client_secret')]
        : basic.map(decodeURIComponent);
      if (id !== CLIENT.id || secret !== CLIENT.secret)
        return Response.json({ error: 'invalid_client' }, { status: 401 });
      const issued = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (
        !issued ||
        issued.redirectUri !== form.get('redirect_uri') ||
        issued.challenge !== (await s256(form.get('code_verifier') ?? ''))
      )
        return Response.json({ error: 'invalid_grant' }, { status: 400 });
      return Response.json({ access_token: `at-${issued.account}`, token_type: 'bearer', expires_in: 60 });
    }
    if (path === '/api/v2/me') {
      const who = (req.headers.get('authorization') ?? '').replace('Bearer at-', '');
      const found = ACCOUNTS[who as keyof typeof ACCOUNTS];
      return found ? Response.json(found) : new Response('unauthorized', { status: 401 });
    }
    return new Response('not found', { status: 404 });
  },
});
const acme = createAcmeProvider({ origin: (domain) => `https://${IDP_HOST}:${idp.port}/${domain}` });

let t: Awaited<ReturnType<typeof startRecordingIdentityService>>;
beforeAll(async () => {
  t = await startRecordingIdentityService({
    extra: [sso({ providers: [...builtInProviders, acme] }), ssoSignIn()],
  });
  const created = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
    body: {
      provider: 'acme',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      options: { acme: { domain: DOMAIN } },
    },
  });
  await expectStatus(created, 201);
  await expectStatus(
    await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
    200,
  );
});
afterAll(async () => {
  await t.stop();
  idp.stop(true);
});

/** A sign-in as the browser makes it: start, Acme ID's redirect back, the callback. */
async function signIn() {
  const q = new URLSearchParams({ client_id: CLIENT.id, redirect_uri: APP });
  const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
  await expectStatus(started, 302);
  const authorize = new URL(started.headers.get('location') ?? '');
  const atIdp = await fetchTestHost(authorize, { redirect: 'manual' });
  await expectStatus(atIdp, 302);
  const back = new URL(atIdp.headers.get('location') ?? '');
  // Back in the browser that started it: the start's cookie binds the sign-in to it.
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
  const res = await t.call('GET', `${back.pathname}${back.search}`, {
    orgId: null,
    key: null,
    headers: { cookie },
  });
  await expectStatus(res, 302);
  return {
    authorize,
    fragment: new URLSearchParams(new URL(res.headers.get('location') ?? '').hash.slice(1)),
  };
}

describe('sign-in through the example third-party provider (Acme ID, OAuth 2.0 without OIDC)', () => {
  it('signs a person in by their confirmed email, with PKCE and the effective scopes', async () => {
    account = 'ada';
    const { authorize, fragment } = await signIn();
    expect(authorize.pathname).toBe(`/${DOMAIN}/oauth2/authorize`);
    expect(authorize.searchParams.get('scope')).toBe('account:read email avatar');
    expect(authorize.searchParams.has('nonce')).toBe(false);
    expect(tokenRequests.at(-1)?.get('code_verifier')?.length).toBeGreaterThanOrEqual(43);
    expect(fragment.get('error_description')).toBeNull();
    const jwks = await t.call('GET', '/.well-known/jwks.json', { key: null });
    const { payload } = await jwtVerify(fragment.get('token') ?? '', createLocalJWKSet(jwks.json));
    const personId = String(payload.person_id);
    expect(payload.authenticated_methods).toEqual(['oidc']);
    const person = await t.call('GET', `/persons/${personId}`);
    await expectStatus(person, 200);
    expect(person.text).toContain('ada@example.com');
    const succeeded = await t.eventFor('AuthenticationSucceeded_v1', personId);
    expect(succeeded.success_authn_method).toBe('oidc');
    expect((await signIn()).fragment.get('person_id')).toBe(personId);
  });

  it('refuses an account whose email Acme ID has not confirmed', async () => {
    account = 'bob';
    const { fragment } = await signIn();
    expect(fragment.get('token')).toBeNull();
    expect(fragment.get('error')).toBe('access_denied');
  });

  it('is served by the real entry when SERVICE_CONFIG names the example deployment', async () => {
    const entry = await startRealEntry('examples/acme-sso-provider/service.config.ts');
    try {
      const created = await fetch(`${entry.base}/organizations/sso/oidc/provider-credentials`, {
        method: 'POST',
        headers: entry.headers,
        body: JSON.stringify({
          provider: 'acme',
          client_id: CLIENT.id,
          client_secret: CLIENT.secret,
          options: { acme: { domain: DOMAIN } },
        }),
      });
      await expectStatus(created, 201);
      const uris = await fetch(`${entry.base}/organizations/sso/redirect-uris`, {
        method: 'PUT',
        headers: entry.headers,
        body: JSON.stringify({ redirect_uris: [APP] }),
      });
      await expectStatus(uris, 200);
      const q = new URLSearchParams({ client_id: CLIENT.id, redirect_uri: APP });
      const started = await fetch(`${entry.base}/sso/oidc/start?${q}`, {
        headers: { 'Service-OrgID': entry.headers['Service-OrgID'] },
        redirect: 'manual',
      });
      await expectStatus(started, 302);
      const location = new URL(started.headers.get('location') ?? '');
      expect(location.origin + location.pathname).toBe(`https://${DOMAIN}/oauth2/authorize`);
    } finally {
      await entry.stop();
    }
  }, 90_000);
});
