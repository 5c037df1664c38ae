import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { ServiceError } from '../../../core/errors.ts';
import type { ServiceEvent } from '../../../core/events/types.ts';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startRecordingIdentityService } from '../../helpers/identity-recorder.ts';
import { browseTo, startOidcOp } from '../../helpers/oidc-op.ts';

const APP = 'https://app.example/signed-in';
const client = {
  clientId: 'acme-app',
  clientSecret: 'a-client-secret-of-the-loopback-op',
  // The retired shared callback: the provider allows the credential's own once it is created.
  redirectUri: 'https://ids.test/sso/oidc/callback',
};
/** The credential's own redirect URI, as its API shows it. */
let CALLBACK = '';

const acme = oidcProvider({ id: 'acme', displayName: 'Acme' });
let t: Awaited<ReturnType<typeof startRecordingIdentityService>>;
let op: Awaited<ReturnType<typeof startOidcOp>>;

beforeAll(async () => {
  op = await startOidcOp(client);
  t = await startRecordingIdentityService({ extra: [sso({ providers: [acme] }), ssoSignIn()] });
  const credential = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
    body: {
      provider: 'acme',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      options: { acme: { issuer: op.issuer, authorize_scopes: ['email'] } },
    },
  });
  await expectStatus(credential, 201);
  expect(credential.json.result.effective_scopes).toEqual(['email', 'openid']);
  CALLBACK = credential.json.result.redirect_uri;
  op.allowRedirectUri(CALLBACK);
  await expectStatus(
    await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
    200,
  );
});
afterAll(async () => {
  await t.stop();
  await op.stop();
});

/** GET /sso/oidc/start as an application's page does: Service-OrgID only. */
async function start(o: { redirectUri?: string; state?: string } = {}) {
  const q = new URLSearchParams({ client_id: client.clientId, redirect_uri: o.redirectUri ?? APP });
  if (o.state) q.set('state', o.state);
  return t.call('GET', `/sso/oidc/start?${q}`, { key: null });
}

/** The cookie GET /sso/oidc/start gave the browser, as the browser sends it back. */
const cookieOf = (started: { headers: Headers }) => (started.headers.get('set-cookie') ?? '').split(';')[0]!;

/** The callback as the browser that started the sign-in calls it (its cookie). */
const callBack = (back: URL, cookie: string) =>
  t.call('GET', `${back.pathname}${back.search}`, { orgId: null, key: null, headers: { cookie } });

/** Starts, goes through the provider, and calls the callback; the callback's answer and its URL. */
async function signIn(decision: Parameters<typeof setDecision>[0], before?: () => Promise<void> | void) {
  setDecision(decision);
  const started = await start({ state: 'app-state-1' });
  await expectStatus(started, 302);
  const back = await browseTo(started.headers.get('location') ?? '', CALLBACK);
  await before?.();
  const cookie = cookieOf(started);
  const res = await callBack(back, cookie);
  return {
    res,
    back,
    cookie,
    fragment: new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1)),
  };
}
const setDecision = (d: typeof op.state.decision) => {
  op.state.decision = d;
};

const failures = (reason: string) =>
  t.events.filter(
    (e: ServiceEvent) =>
      e.event_metadata.event_name === 'AuthenticationFailed_v1' && e.failure_reason === reason,
  );
async function failureFor(reason: string) {
  const deadline = Date.now() + 5000;
  while (!failures(reason).length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const [found] = failures(reason);
  if (!found) throw new Error(`no AuthenticationFailed_v1 with failure_reason ${reason}`);
  return found;
}

const alice = { sub: 'alice-at-acme', email: 'Alice@Acme.example', email_verified: true };

describe('SSO sign-in through the generic OIDC provider', () => {
  it('redirects to the provider with state, nonce, PKCE S256 and the effective scopes', async () => {
    const res = await start();
    await expectStatus(res, 302);
    const url = new URL(res.headers.get('location') ?? '');
    expect(url.origin).toBe(op.issuer);
    const p = url.searchParams;
    expect(p.get('client_id')).toBe(client.clientId);
    expect(p.get('redirect_uri')).toBe(CALLBACK);
    expect(p.get('scope')).toBe('email openid');
    expect(p.get('code_challenge_method')).toBe('S256');
    expect(p.get('state')?.length).toBeGreaterThan(20);
    expect(p.get('nonce')?.length).toBeGreaterThan(20);
  });

  it('signs a person in with a real code and PKCE, and finds the same person by email next time', async () => {
    const first = await signIn(alice);
    await expectStatus(first.res, 302);
    expect(first.res.headers.get('location')?.startsWith(`${APP}#`)).toBe(true);
    expect(first.fragment.get('state')).toBe('app-state-1');
    expect(first.fragment.get('error_description')).toBeNull();
    const token = first.fragment.get('token') ?? '';
    const jwks = await t.call('GET', '/.well-known/jwks.json', { key: null });
    await expectStatus(jwks, 200);
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks.json));
    const personId = first.fragment.get('person_id');
    expect(payload.person_id).toBe(personId);
    expect(payload.authenticated_methods).toEqual(['oidc']);

    const person = await t.call('GET', `/persons/${personId}`);
    await expectStatus(person, 200);
    expect(JSON.stringify(person.json)).toContain('alice@acme.example');
    const succeeded = await t.eventFor('AuthenticationSucceeded_v1', personId ?? '');
    expect(succeeded.success_authn_method).toBe('oidc');
    expect(succeeded.authenticated_methods).toEqual(['oidc']);
    expect('handle' in succeeded).toBe(false);
    expect(t.drafts.some((d) => d.personId === personId)).toBe(true);

    const second = await signIn(alice);
    expect(second.fragment.get('person_id')).toBe(personId);
  });

  it('refuses a replayed state with AuthenticationFailed_v1', async () => {
    const first = await signIn(alice);
    expect(first.fragment.get('token')).toBeTruthy();
    const again = await callBack(first.back, first.cookie);
    await expectStatus(again, 302);
    const fragment = new URLSearchParams(new URL(again.headers.get('location') ?? '').hash.slice(1));
    expect(fragment.get('error')).toBe('invalid_request');
    expect(fragment.get('token')).toBeNull();
    expect((await failureFor('replayed_state')).failed_authn_method).toBe('oidc');
  });

  it('answers 400 to a state it never issued, and says a missing state is required', async () => {
    const own = new URL(CALLBACK).pathname;
    const res = await t.call('GET', `${own}?state=forged&code=x`, { orgId: null, key: null });
    await expectStatus(res, 400);
    const none = await t.call('GET', `${own}?code=x`, { orgId: null, key: null });
    await expectStatus(none, 400);
    expect(none.json.errors[0].message).toBe('query.state: is required');
  });

  it('answers invalid_request to a provider answer with neither code nor error', async () => {
    setDecision(alice);
    const started = await start({ state: 'app-state-1' });
    const back = await browseTo(started.headers.get('location') ?? '', CALLBACK);
    back.searchParams.delete('code');
    const res = await callBack(back, cookieOf(started));
    await expectStatus(res, 302);
    const fragment = new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1));
    expect(fragment.get('error')).toBe('invalid_request');
    expect(fragment.get('error_description')).toBe("the provider's answer has neither code nor error");
    await failureFor('invalid_callback');
  });

  it('refuses an ID token with another nonce', async () => {
    const { fragment } = await signIn(alice, () => op.wrongNonce());
    expect(fragment.get('error')).toBe('server_error');
    expect(fragment.get('token')).toBeNull();
    expect((await failureFor('bad_id_token')).failure_detail).toContain('nonce');
  });

  it('refuses an ID token signed with a key the issuer did not publish', async () => {
    const { fragment } = await signIn(alice, () => op.otherKey());
    expect(fragment.get('token')).toBeNull();
    const deadline = Date.now() + 5000;
    const bySignature = () =>
      failures('bad_id_token').some((e) => /signature/i.test(String(e.failure_detail)));
    while (!bySignature() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(failures('bad_id_token').map((e) => e.failure_detail)).toContainEqual(
      expect.stringMatching(/signature verification failed/),
    );
  });

  it('reports denied consent as access_denied', async () => {
    const { fragment } = await signIn('deny');
    expect(fragment.get('error')).toBe('access_denied');
    await failureFor('access_denied');
  });

  it('refuses an email the provider does not vouch for', async () => {
    const { fragment } = await signIn({ sub: 'bob', email: 'bob@acme.example', email_verified: false });
    expect(fragment.get('error')).toBe('access_denied');
    await failureFor('unverified_email');
  });

  it('refuses a disabled person, naming it as one the provider authenticated', async () => {
    const dora = { sub: 'dora-at-acme', email: 'dora@acme.example', email_verified: true };
    const first = await signIn(dora);
    const personId = first.fragment.get('person_id') ?? '';
    const off = await t.call('PATCH', `/persons/${personId}`, { body: { active: false } });
    await expectStatus(off, 200);
    const { fragment } = await signIn(dora);
    expect(fragment.get('error')).toBe('access_denied');
    // The provider authenticated the person: person_id, region and authenticated_methods, together.
    expect(await failureFor('person_disabled')).toMatchObject({
      person_id: personId,
      region: 'us-iowa',
      authenticated_methods: ['oidc'],
    });
  });

  it('stores nobody for a first sign-in the token_minted hook blocks, and the person once it allows', async () => {
    const erin = { sub: 'erin-at-acme', email: 'erin@acme.example', email_verified: true };
    const namesErin = (e: ServiceEvent) => JSON.stringify(e).includes('erin@acme.example');
    t.hook.answer = () => {
      throw new ServiceError(403, 'HOOK_BLOCKED', 'erin may not sign up');
    };
    try {
      const { fragment } = await signIn(erin);
      expect(fragment.get('error')).toBe('access_denied');
      expect(fragment.get('person_id')).toBeNull();
    } finally {
      t.hook.answer = () => undefined;
    }
    // The hook saw the person the sign-up would have made; it was never stored, so the failure names nobody.
    const refused = t.drafts.at(-1)!.personId;
    await expectStatus(await t.call('GET', `/persons/${refused}`), 404);
    const failed = await failureFor('token_blocked');
    expect(failed).not.toHaveProperty('person_id');
    expect(failed).not.toHaveProperty('authenticated_methods');
    expect(
      t.events.filter((e) => e.event_metadata.event_name === 'PersonCreated_v1' && namesErin(e)),
    ).toEqual([]);

    const allowed = await signIn(erin);
    const personId = allowed.fragment.get('person_id') ?? '';
    expect(personId).not.toBe(refused);
    await expectStatus(await t.call('GET', `/persons/${personId}`), 200);
    expect(namesErin(await t.eventFor('PersonCreated_v1', personId))).toBe(true);
  });

  it('signs two first sign-ins of one person racing each other in as the one person stored', async () => {
    const fay = { sub: 'fay-at-acme', email: 'fay@acme.example', email_verified: true };
    // Both reach the hook before either stores its person: each holds a prospective person of its own.
    let arrived = 0;
    let bothThere!: () => void;
    const barrier = new Promise<void>((r) => {
      bothThere = r;
    });
    t.hook.answer = async () => {
      if (++arrived === 2) bothThere();
      if (arrived <= 2) await barrier;
      return undefined;
    };
    try {
      setDecision(fay);
      const backs = [];
      for (const state of ['fay-1', 'fay-2']) {
        const started = await start({ state });
        await expectStatus(started, 302);
        backs.push({
          back: await browseTo(started.headers.get('location') ?? '', CALLBACK),
          cookie: cookieOf(started),
        });
      }
      const answers = await Promise.all(backs.map(({ back, cookie }) => callBack(back, cookie)));
      const fragments = answers.map(
        (res) => new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1)),
      );
      for (const f of fragments) expect(f.get('error_description')).toBeNull();
      const [one, two] = fragments.map((f) => f.get('person_id'));
      expect(one).toBeTruthy();
      expect(two).toBe(one);
      // The one that lost the race asked the hook again, for the person stored.
      expect(arrived).toBe(3);
      const created = t.events.filter(
        (e) =>
          e.event_metadata.event_name === 'PersonCreated_v1' &&
          JSON.stringify(e).includes('fay@acme.example'),
      );
      expect(created.map((e) => e.person_id)).toEqual([one]);
    } finally {
      t.hook.answer = () => undefined;
    }
  });

  for (const stored of [
    { as: 'disabled', handle: { verified: true }, person: { active: false }, reason: 'person_disabled' },
    { as: 'unverified', handle: { verified: false }, person: {}, reason: 'unverified_handle' },
  ])
    it(`refuses a first sign-in whose address the API stored meanwhile for a person ${stored.as}`, async () => {
      const email = `gil-${stored.as}@acme.example`;
      const before = failures(stored.reason).length;
      let madeId = '';
      // While the hook decides, the organization stores a person with the address through the API.
      t.hook.answer = async () => {
        if (madeId) return undefined;
        const made = await t.call('POST', '/persons', {
          body: { handles: [{ type: 'email_address', value: email, ...stored.handle }], ...stored.person },
        });
        await expectStatus(made, 201);
        madeId = made.json.result.person_id;
        return undefined;
      };
      try {
        const { fragment } = await signIn({ sub: `gil-${stored.as}`, email, email_verified: true });
        expect(fragment.get('error')).toBe('access_denied');
        expect(fragment.get('token')).toBeNull();
      } finally {
        t.hook.answer = () => undefined;
      }
      // Reported for what it is; a disabled person is named (the provider authenticated it), a person
      // whose address is unverified is not (the sign-in is not linked to it).
      const deadline = Date.now() + 5000;
      while (failures(stored.reason).length === before && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(
        failures(stored.reason)
          .slice(before)
          .map((e) => e.person_id),
      ).toEqual([stored.as === 'disabled' ? madeId : undefined]);
      expect(
        t.events.some(
          (e) => e.event_metadata.event_name === 'AuthenticationSucceeded_v1' && e.person_id === madeId,
        ),
      ).toBe(false);
    });

  it('refuses a redirect_uri the organization does not list, and an http one off loopback', async () => {
    await expectStatus(await start({ redirectUri: 'https://app.example/other' }), 400);
    const put = await t.call('PUT', '/organizations/sso/redirect-uris', {
      body: { redirect_uris: ['http://app.example/cb'] },
    });
    await expectStatus(put, 400);
    expect(put.text).toContain('redirect_uris[0]');
  });
});

describe('a provider that posts its answer (form_post, as Sign in with Apple does)', () => {
  it('sends the browser on to the callback by GET with the same parameters, which signs the person in', async () => {
    setDecision({ sub: 'posted-at-acme', email: 'posted@acme.example', email_verified: true });
    const started = await start({ state: 'app-state-posted' });
    await expectStatus(started, 302);
    const back = await browseTo(started.headers.get('location') ?? '', CALLBACK);
    const posted = await t.call('POST', new URL(CALLBACK).pathname, {
      orgId: null,
      key: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: op.issuer },
      raw: back.searchParams.toString(),
    });
    await expectStatus(posted, 303);
    const onward = new URL(posted.headers.get('location') ?? '');
    expect(`${onward.origin}${onward.pathname}`).toBe(CALLBACK);
    expect([...onward.searchParams].sort()).toEqual([...back.searchParams].sort());
    expect(posted.headers.get('cache-control')).toBe('no-store');

    const res = await callBack(onward, cookieOf(started));
    await expectStatus(res, 302);
    const fragment = new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1));
    expect(fragment.get('state')).toBe('app-state-posted');
    expect(fragment.get('token')).toBeTruthy();
  });

  it('refuses a posted body that is not a form with a 400 envelope', async () => {
    const res = await t.call('POST', new URL(CALLBACK).pathname, {
      orgId: null,
      key: null,
      body: { code: 'x' },
    });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('application/x-www-form-urlencoded');
  });
});
