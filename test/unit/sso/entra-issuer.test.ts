import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { azuread, azureadOptions, entraIdTokenIssuer } from '../../../plugins/sso/providers/azuread.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startRecordingIdentityService } from '../../helpers/identity-recorder.ts';
import { IDP_HOST, testTls } from '../../helpers/tls.ts';

/**
 * Microsoft Entra's multi-tenant endpoints cannot run here, so a loopback server answers as they do,
 * over https at IDP_HOST with the test certificate (the test service maps the name and trusts the CA):
 * `/common/v2.0` publishes the `{tenantid}` template as its issuer, and each ID token carries its
 * tenant's own issuer and `tid`. The provider under test is the built-in azuread one with its
 * endpoints moved to that server.
 */
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const OTHER_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
const CLIENT = 'entra-app';
const APP = 'https://app.example/signed-in';

const { privateKey, publicKey } = await generateKeyPair('RS256');
const jwk = { ...(await exportJWK(publicKey)), kid: 'entra-key', alg: 'RS256', use: 'sig' };
/** What the next token answer's ID token says: its iss tenant and tid, and the nonce it repeats. */
const next = { issTenant: TENANT, tid: TENANT, nonce: '' };
/** Whether the metadata says authorization responses carry `iss` (RFC 9207), as Entra's does not. */
const metadata = { sendsIss: false };
/** Token requests the server received. */
let tokenRequests = 0;

const server = createServer({ cert: testTls().certPem, key: testTls().keyPem }, async (req, res) => {
  const url = new URL(req.url ?? '/', base);
  const json = (body: unknown) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  };
  const tenant = url.pathname.split('/')[1] ?? '';
  if (url.pathname.endsWith('/v2.0/.well-known/openid-configuration'))
    return json({
      // `common` answers with the template; a tenant ID with its own issuer.
      issuer: `${base}/${tenant === 'common' ? '{tenantid}' : tenant}/v2.0`,
      authorization_endpoint: `${base}/${tenant}/oauth2/v2.0/authorize`,
      token_endpoint: `${base}/${tenant}/oauth2/v2.0/token`,
      jwks_uri: `${base}/${tenant}/discovery/v2.0/keys`,
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['code'],
      ...(metadata.sendsIss ? { authorization_response_iss_parameter_supported: true } : {}),
    });
  if (url.pathname.endsWith('/discovery/v2.0/keys')) return json({ keys: [jwk] });
  if (url.pathname.endsWith('/oauth2/v2.0/token')) {
    tokenRequests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk);
    const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64');
    const form = new URLSearchParams(Buffer.concat(chunks).toString());
    const audience = form.get('client_id') ?? decodeURIComponent(basic.toString().split(':')[0] ?? '');
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({
      tid: next.tid,
      nonce: next.nonce,
      email: 'ada@contoso.example',
      xms_edov: true,
    })
      .setProtectedHeader({ alg: 'RS256', kid: 'entra-key' })
      .setIssuer(`${base}/${next.issTenant}/v2.0`)
      .setAudience(audience)
      .setSubject(`ada-in-${next.tid}`)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    return json({ access_token: 'entra-access', token_type: 'Bearer', expires_in: 300, id_token: idToken });
  }
  res.statusCode = 404;
  res.end();
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const base = `https://${IDP_HOST}:${(server.address() as AddressInfo).port}`;

const entra = defineSsoProvider({
  ...azuread,
  options: azureadOptions,
  endpoints: { issuer: (o) => `${base}/${o.tenant}/v2.0`, idTokenIssuer: entraIdTokenIssuer },
});

let t: Awaited<ReturnType<typeof startRecordingIdentityService>>;
beforeAll(async () => {
  t = await startRecordingIdentityService({ extra: [sso({ providers: [entra] }), ssoSignIn()] });
  for (const [clientId, tenant] of [
    [CLIENT, 'common'],
    [`${CLIENT}-single`, TENANT],
  ] as const) {
    const created = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
      body: {
        provider: 'azuread',
        client_id: clientId,
        client_secret: 's',
        options: { azuread: { tenant } },
      },
    });
    await expectStatus(created, 201);
  }
  await expectStatus(
    await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
    200,
  );
});
afterAll(async () => {
  await t.stop();
  server.close();
});

/**
 * Starts a sign-in, answers the callback as Entra would (with `iss` when given), and returns the
 * fragment the app receives.
 */
async function signIn(clientId = CLIENT, iss?: string) {
  const q = new URLSearchParams({ client_id: clientId, redirect_uri: APP });
  const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
  await expectStatus(started, 302);
  const authorize = new URL(started.headers.get('location') ?? '');
  next.nonce = authorize.searchParams.get('nonce') ?? '';
  const back = new URLSearchParams({ code: 'entra-code', state: authorize.searchParams.get('state') ?? '' });
  if (iss !== undefined) back.set('iss', iss);
  const own = new URL(authorize.searchParams.get('redirect_uri') ?? '').pathname;
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
  const res = await t.call('GET', `${own}?${back}`, { orgId: null, key: null, headers: { cookie } });
  await expectStatus(res, 302);
  return new URLSearchParams(new URL(res.headers.get('location') ?? '').hash.slice(1));
}

describe('Microsoft Entra ID through its multi-tenant `common` endpoint', () => {
  it('fills the `{tenantid}` template from the token: only a tid-matching issuer is accepted', () => {
    const template = 'https://login.microsoftonline.com/{tenantid}/v2.0';
    expect(entraIdTokenIssuer(template, { tid: TENANT })).toBe(
      `https://login.microsoftonline.com/${TENANT}/v2.0`,
    );
    expect(entraIdTokenIssuer(template, { tid: 'not-a-guid' })).toBe(template);
    expect(entraIdTokenIssuer(template, {})).toBe(template);
    const fixed = `https://login.microsoftonline.com/${TENANT}/v2.0`;
    expect(entraIdTokenIssuer(fixed, { tid: OTHER_TENANT })).toBe(fixed);
  });

  it('signs in a person of any tenant whose token names its own tenant as issuer', async () => {
    next.issTenant = TENANT;
    next.tid = TENANT;
    const fragment = await signIn();
    expect(fragment.get('error_description')).toBeNull();
    expect(fragment.get('token')).toBeTruthy();
  });

  it('refuses a token whose issuer names another tenant than its tid', async () => {
    next.issTenant = OTHER_TENANT;
    next.tid = TENANT;
    const fragment = await signIn();
    expect(fragment.get('token')).toBeNull();
    expect(fragment.get('error')).toBe('server_error');
  });

  it('holds a single-tenant credential to its own issuer', async () => {
    next.issTenant = TENANT;
    next.tid = TENANT;
    const ok = await signIn(`${CLIENT}-single`);
    expect(ok.get('error_description')).toBeNull();
    expect(ok.get('token')).toBeTruthy();
    next.issTenant = OTHER_TENANT;
    next.tid = OTHER_TENANT;
    expect((await signIn(`${CLIENT}-single`)).get('token')).toBeNull();
  });
});

describe("Entra's answer with `iss` (RFC 9207) through `common`", () => {
  const tenantIssuer = () => `${base}/${TENANT}/v2.0`;

  it("takes an iss of the token's tenant where the metadata publishes the template", async () => {
    next.issTenant = TENANT;
    next.tid = TENANT;
    metadata.sendsIss = true;
    try {
      const fragment = await signIn(CLIENT, tenantIssuer());
      expect(fragment.get('error_description')).toBeNull();
      expect(fragment.get('token')).toBeTruthy();
    } finally {
      metadata.sendsIss = false;
    }
  });

  it('refuses an answer without iss when the metadata says it sends one, before any token request', async () => {
    // A fresh service: the discovery cache of the one above has the metadata without the flag.
    const fresh = await startRecordingIdentityService({ extra: [sso({ providers: [entra] }), ssoSignIn()] });
    const before = tokenRequests;
    metadata.sendsIss = true;
    const saved = t;
    try {
      t = fresh;
      await expectStatus(
        await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
          body: { provider: 'azuread', client_id: CLIENT, client_secret: 's', options: { azuread: {} } },
        }),
        201,
      );
      await expectStatus(
        await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
        200,
      );
      const fragment = await signIn(CLIENT);
      expect(fragment.get('token')).toBeNull();
      expect(fragment.get('error_description')).toContain('has no iss');
      expect(tokenRequests).toBe(before);
      const reasons = () =>
        fresh.events
          .filter((e) => e.event_metadata.event_name === 'AuthenticationFailed_v1')
          .map((e) => e.failure_reason);
      const deadline = Date.now() + 5000;
      while (!reasons().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(reasons()).toEqual(['issuer_mismatch']);
    } finally {
      t = saved;
      metadata.sendsIss = false;
      await fresh.stop();
    }
  });

  it('refuses an iss of another host, and one of another tenant than the ID token', async () => {
    next.issTenant = TENANT;
    next.tid = TENANT;
    const before = tokenRequests;
    const elsewhere = await signIn(CLIENT, `https://attacker.example/${TENANT}/v2.0`);
    expect(elsewhere.get('token')).toBeNull();
    expect(elsewhere.get('error_description')).toContain('not from this credential');
    expect(tokenRequests).toBe(before);
    const otherTenant = await signIn(CLIENT, `${base}/${OTHER_TENANT}/v2.0`);
    expect(otherTenant.get('token')).toBeNull();
    expect(otherTenant.get('error_description')).toContain("is not the ID token's issuer");
  });
});
