import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { ServiceEvent } from '../../../core/events/types.ts';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startRecordingIdentityService } from '../../helpers/identity-recorder.ts';
import { browseTo, startOidcOp } from '../../helpers/oidc-op.ts';

/**
 * RFC 9700 section 4.4 (mix-up) at SSO sign-in's callbacks: each credential's answer is taken only at
 * its own redirect URI, for a state started for it, by the browser that started it, from its issuer
 * (RFC 9207). Two real OpenID providers (oidc-provider on loopback) record what they receive, so each
 * refusal is shown to have sent nothing to any token endpoint.
 */
const APP = 'https://app.example/signed-in';
const SHARED = 'https://ids.test/sso/oidc/callback';
const acme = oidcProvider({ id: 'acme', displayName: 'Acme' });
const alice = { sub: 'alice', email: 'alice@acme.example', email_verified: true };

let t: Awaited<ReturnType<typeof startRecordingIdentityService>>;
let other: { orgId: string; key: string };
let opA: Awaited<ReturnType<typeof startOidcOp>>;
let opB: Awaited<ReturnType<typeof startOidcOp>>;
/** Redirect URIs of the credentials: A and B of the organization, A2 of another one (same client ID as A). */
const own = { A: '', B: '', A2: '' };

const opClientA = { clientId: 'acme-app', clientSecret: 'secret-of-a', redirectUri: SHARED };
const opClientB = { clientId: 'beta-app', clientSecret: 'secret-of-b', redirectUri: SHARED };

async function credential(
  clientId: string,
  secret: string,
  issuer: string,
  org?: { orgId: string; key: string },
) {
  const made = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
    body: { provider: 'acme', client_id: clientId, client_secret: secret, options: { acme: { issuer } } },
    ...(org ? { orgId: org.orgId, key: org.key } : {}),
  });
  await expectStatus(made, 201);
  const uris = await t.call('PUT', '/organizations/sso/redirect-uris', {
    body: { redirect_uris: [APP] },
    ...(org ? { orgId: org.orgId, key: org.key } : {}),
  });
  await expectStatus(uris, 200);
  return made.json.result.redirect_uri as string;
}

beforeAll(async () => {
  opA = await startOidcOp(opClientA, { record: true });
  opB = await startOidcOp(opClientB, { record: true });
  t = await startRecordingIdentityService({ extra: [sso({ providers: [acme] }), ssoSignIn()] });
  const made = await t.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
  own.A = await credential(opClientA.clientId, opClientA.clientSecret, opA.issuer);
  own.B = await credential(opClientB.clientId, opClientB.clientSecret, opB.issuer);
  own.A2 = await credential(opClientA.clientId, 'secret-of-a-elsewhere', opA.issuer, other);
  opA.allowRedirectUri(own.A);
  opA.allowRedirectUri(own.A2);
  opB.allowRedirectUri(own.B);
});
afterAll(async () => {
  await t.stop();
  await opA.stop();
  await opB.stop();
});

/** GET /sso/oidc/start for a credential: the provider's URL and the browser's cookie. */
async function start(clientId: string, org?: { orgId: string }) {
  const q = new URLSearchParams({ client_id: clientId, redirect_uri: APP });
  const started = await t.call('GET', `/sso/oidc/start?${q}`, {
    key: null,
    ...(org ? { orgId: org.orgId } : {}),
  });
  await expectStatus(started, 302);
  return {
    location: started.headers.get('location') ?? '',
    cookie: (started.headers.get('set-cookie') ?? '').split(';')[0]!,
  };
}

/** A whole round trip at the provider: the answer (code, state, iss) at the credential's callback. */
async function answerFor(clientId: string, callback: string, org?: { orgId: string }) {
  opA.state.decision = alice;
  opB.state.decision = alice;
  const started = await start(clientId, org);
  return { ...started, back: await browseTo(started.location, callback) };
}

const call = (path: string, cookie?: string) =>
  t.call('GET', path, { orgId: null, key: null, ...(cookie ? { headers: { cookie } } : {}) });
const pathOf = (uri: string) => new URL(uri).pathname;
/** Requests to a provider's token endpoint since `from` (an index into its records). */
const tokenRequests = (op: typeof opA, from = 0) =>
  op.requests.slice(from).filter((r) => r.url.startsWith('/token'));

const failures = (reason: string, orgId?: string) =>
  t.events.filter(
    (e: ServiceEvent) =>
      e.event_metadata.event_name === 'AuthenticationFailed_v1' &&
      e.failure_reason === reason &&
      (orgId === undefined || e.event_metadata.organization_id === orgId),
  );
async function reported(reason: string, orgId?: string, count = 1) {
  const deadline = Date.now() + 5000;
  while (failures(reason, orgId).length < count && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  return failures(reason, orgId);
}

describe("a credential's callback", () => {
  it('signs in with its own state, from the browser that started it (the control)', async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A);
    const res = await call(`${back.pathname}${back.search}`, cookie);
    await expectStatus(res, 302);
    expect(new URL(res.headers.get('location') ?? '').hash).toContain('token=');
  });

  it('refuses a state started for another credential of the organization, sending the code nowhere', async () => {
    const { back, cookie } = await answerFor(opClientB.clientId, own.B);
    const a = opA.requests.length;
    const b = opB.requests.length;
    const res = await call(`${pathOf(own.A)}${back.search}`, cookie);
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('started for another SSO credential');
    expect(res.headers.get('location')).toBeNull();
    expect(tokenRequests(opA, a)).toEqual([]);
    expect(tokenRequests(opB, b)).toEqual([]);
    expect((await reported('wrong_callback', t.org.id))[0]?.failed_authn_method).toBe('oidc');
  });

  it('refuses a state started in another organization for a credential of the same client ID', async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A2, other);
    const a = opA.requests.length;
    const before = failures('wrong_callback', other.orgId).length;
    const res = await call(`${pathOf(own.A)}${back.search}`, cookie);
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('started for another SSO credential');
    expect(tokenRequests(opA, a)).toEqual([]);
    // Both organizations hear of it: the one whose sign-in it was, and the one whose URI was used.
    expect((await reported('wrong_callback', other.orgId, before + 1)).length).toBe(before + 1);
    expect(new Set(failures('wrong_callback').map((e) => e.event_metadata.organization_id))).toEqual(
      new Set([t.org.id, other.orgId]),
    );
  });

  it('refuses the answer without the browser cookie of the start, or with another', async () => {
    const { back } = await answerFor(opClientA.clientId, own.A);
    const a = opA.requests.length;
    const bare = await call(`${back.pathname}${back.search}`);
    await expectStatus(bare, 403);
    expect(bare.json.errors[0].message).toContain('started by another browser');
    expect(bare.headers.get('location')).toBeNull();

    const second = await answerFor(opClientA.clientId, own.A);
    const { cookie: another } = await start(opClientA.clientId);
    const a2 = opA.requests.length;
    const wrong = await call(`${second.back.pathname}${second.back.search}`, another);
    await expectStatus(wrong, 403);
    expect(wrong.json.errors[0].message).toContain('started by another browser');
    expect(tokenRequests(opA, a)).toEqual([]);
    expect(tokenRequests(opA, a2)).toEqual([]);
    expect((await reported('other_browser', t.org.id, 2)).length).toBe(2);
  });

  it('sets the browser cookie HttpOnly and SameSite=Lax at the start (Secure over https)', async () => {
    const q = new URLSearchParams({ client_id: opClientA.clientId, redirect_uri: APP });
    const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
    await expectStatus(started, 302);
    const cookie = started.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^__Host-sso_browser=[A-Za-z0-9_-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).toContain('Secure');
    expect(cookie).toContain('Path=/');
  });

  it('refuses an answer without iss from a provider whose metadata says it sends one (RFC 9207)', async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A);
    expect(back.searchParams.get('iss')).toBe(opA.issuer);
    back.searchParams.delete('iss');
    const a = opA.requests.length;
    const res = await call(`${back.pathname}${back.search}`, cookie);
    await expectStatus(res, 302);
    const fragment = new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1));
    expect(fragment.get('token')).toBeNull();
    expect(fragment.get('error_description')).toContain('has no iss');
    expect(tokenRequests(opA, a)).toEqual([]);
    await reported('issuer_mismatch', t.org.id);
  });

  it("refuses an answer whose iss is another issuer than the credential's", async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A);
    back.searchParams.set('iss', opB.issuer);
    const a = opA.requests.length;
    const b = opB.requests.length;
    const res = await call(`${back.pathname}${back.search}`, cookie);
    await expectStatus(res, 302);
    const fragment = new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1));
    expect(fragment.get('token')).toBeNull();
    expect(fragment.get('error_description')).toContain(`comes from issuer ${opB.issuer}`);
    expect(tokenRequests(opA, a)).toEqual([]);
    expect(tokenRequests(opB, b)).toEqual([]);
    expect((await reported('issuer_mismatch', t.org.id, 2)).length).toBe(2);
  });

  it('answers 404 at a callback ID no credential has, burning nothing', async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A);
    const nobody = await call(`/sso/oidc/callback/${crypto.randomUUID()}${back.search}`, cookie);
    await expectStatus(nobody, 404);
    expect(nobody.json.errors[0].message).toContain('no SSO credential has this redirect URI');
    const res = await call(`${back.pathname}${back.search}`, cookie);
    await expectStatus(res, 302);
    expect(new URL(res.headers.get('location') ?? '').hash).toContain('token=');
  });
});

describe('a posted answer (form_post) to any callback path', () => {
  it('is sent on by GET with its callback ID percent-encoded, whatever the path holds', async () => {
    // The hosted login's posted callback builds its Location with the same credentialRedirectUri.
    for (const path of ['/sso/oidc/callback/%F0%9F%98%80', '/sso/oidc/callback/%E2%9C%93%20x']) {
      const res = await t.call('POST', path, {
        orgId: null,
        key: null,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        raw: 'state=s&code=c',
      });
      await expectStatus(res, 303);
      const location = res.headers.get('location') ?? '';
      expect(location).toStartWith(`${t.config.publicBaseUrl}${path}?`);
    }
  });
});

describe('the retired shared callback', () => {
  it('answers 410 by GET and by POST, redeeming nothing and leaving the state to its own callback', async () => {
    const { back, cookie } = await answerFor(opClientA.clientId, own.A);
    const a = opA.requests.length;
    const got = await call(`/sso/oidc/callback${back.search}`, cookie);
    await expectStatus(got, 410);
    expect(got.json.errors[0].message).toContain('/sso/oidc/callback is retired');
    expect(got.json.errors[0].message).toContain("credential's redirect_uri");
    const posted = await t.call('POST', '/sso/oidc/callback', {
      orgId: null,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      raw: back.searchParams.toString(),
    });
    await expectStatus(posted, 410);
    expect(tokenRequests(opA, a)).toEqual([]);
    const res = await call(`${back.pathname}${back.search}`, cookie);
    await expectStatus(res, 302);
    expect(new URL(res.headers.get('location') ?? '').hash).toContain('token=');
  });
});
