// The Device Authorization Grant (RFC 8628): openid-client drives the device (initiateDeviceAuthorization,
// pollDeviceAuthorizationGrant); the person's browser is driven by HTTP with a cookie jar. Run on PGlite
// (device-grant.test.ts) and Postgres (test/integration/device-grant.postgres.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import * as openid from 'openid-client';
import type { Clock } from '../../../../core/ports/clock.ts';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, expectOAuthError, type MadeClient, postForm } from '../fixture.ts';
import { CookieJar, csrfOf, postPage } from '../sessions/browser-jar.ts';

/** The suite, on a service `start` makes with the fixture clock (user codes entered not limited). */
export function deviceGrantSuite(title: string, start: (clock: Clock) => Promise<AuthorizeService>) {
  const clock = manualClock(Date.now());
  const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
  let s: AuthorizeService;
  let tv: MadeClient;
  let cli: MadeClient;
  let who: Awaited<ReturnType<AuthorizeService['person']>>;

  beforeAll(async () => {
    s = await start(clock);
    tv = await s.createClient({
      client_name: 'Living Room TV',
      grant_types: [DEVICE, 'refresh_token'],
      redirect_uris: [],
    });
    cli = await s.createClient({
      client_name: 'Acme CLI',
      grant_types: [DEVICE],
      redirect_uris: [],
      public: true,
    });
    who = await s.person();
  });
  afterAll(() => s.stop());

  /** openid-client's configuration of a client, found through discovery. */
  function configOf(client: MadeClient, fetchWith?: openid.CustomFetch) {
    return openid
      .discovery(new URL(s.url), client.client_id, client.client_secret, undefined, {
        execute: [openid.allowInsecureRequests],
      })
      .then((config) => {
        if (fetchWith) config[openid.customFetch] = fetchWith;
        return config;
      });
  }

  /** The device's side: a device authorization by openid-client. */
  async function initiate(client: MadeClient, scope = 'openid email') {
    const config = await configOf(client);
    return { config, response: await openid.initiateDeviceAuthorization(config, { scope }) };
  }

  /** The device polling by hand (raw form): each refusal read as is. */
  const poll = (client: MadeClient, deviceCode: string) =>
    postForm(s, '/oauth2/tokens', client, { grant_type: DEVICE, device_code: deviceCode });

  /** The person enters the code in the jar's browser; signs in when the page asks. Answers the approval page. */
  async function signInForCode(jar: CookieJar, userCode: string, person = who, service = s) {
    let res = await postPage(jar, service, '/oauth2/device', { user_code: userCode });
    if (res.status === 200) {
      const csrf = await csrfOf(res);
      res = await postPage(jar, service, '/oauth2/authorize/login', {
        csrf_token: csrf,
        handle: person.handle.value,
        password: person.password,
      });
    }
    await expectStatus(res.clone(), 303);
    const location = new URL(res.headers.get('location')!);
    expect(location.pathname).toBe('/oauth2/device/callback');
    return jar.fetch(location);
  }

  /** The person's whole side: code, sign-in, and the decision. */
  async function decide(jar: CookieJar, userCode: string, decision: 'allow' | 'deny') {
    const approval = await signInForCode(jar, userCode);
    await expectStatus(approval.clone(), 200);
    const res = await postPage(jar, s, '/oauth2/device/approve', {
      csrf_token: await csrfOf(approval),
      decision,
    });
    await expectStatus(res, 200);
  }

  describe(title, () => {
    test('discovery lists the endpoint and the grant type', async () => {
      const config = await configOf(tv);
      const as = config.serverMetadata();
      expect(as.device_authorization_endpoint).toBe(`${s.url}/oauth2/device_authorization`);
      expect(as.grant_types_supported).toContain(DEVICE);
    });

    test('answers codes: user code XXXX-XXXX of the unambiguous alphabet, expires_in, interval', async () => {
      const { response } = await initiate(tv);
      expect(response.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
      expect(response.device_code.length).toBeGreaterThanOrEqual(43);
      expect(response.verification_uri).toBe(`${s.url}/oauth2/device`);
      expect(response.verification_uri_complete).toBe(
        `${s.url}/oauth2/device?user_code=${response.user_code}`,
      );
      expect(response.expires_in).toBe(600);
      expect(response.interval).toBe(5);
      const page = await fetch(response.verification_uri_complete!);
      await expectStatus(page.clone(), 200);
      expect(await page.text()).toContain(`value="${response.user_code}"`);
    });

    test('pending, then the person approves: openid-client gets the tokens, once', async () => {
      const jar = new CookieJar();
      const { response } = await initiate(tv, 'openid email');
      let approved = false;
      // The device polls (openid-client's loop, no wait); at its first authorization_pending the person
      // approves in the browser and the fixture clock moves on by the interval.
      const config = await configOf(tv, async (url, init) => {
        const res = await fetch(url, init as RequestInit);
        if (!approved && String(url).endsWith('/oauth2/tokens')) {
          const body = (await res.clone().json()) as { error?: string };
          expect(body.error).toBe('authorization_pending');
          approved = true;
          await decide(jar, response.user_code, 'allow');
          clock.advance(5000);
        }
        return res;
      });
      const tokens = await openid.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 });
      expect(approved).toBe(true);
      const access = decodeJwt(tokens.access_token);
      expect(access.sub).toBe(who.personId);
      expect(access.client_id).toBe(tv.client_id);
      expect(access.scope).toBe('openid email');
      expect(tokens.refresh_token).toBeTruthy();
      const id = tokens.claims()!;
      expect(id.sub).toBe(who.personId);
      expect(id.aud).toBe(tv.client_id);
      expect(id.amr).toEqual(['pwd']);
      expect(typeof id.auth_time).toBe('number');
      expect(typeof id.sid).toBe('string');

      clock.advance(5000);
      await expectOAuthError(await poll(tv, response.device_code), 400, 'invalid_grant', /used already/);
      // The refresh token works as any other.
      const refreshed = await openid.refreshTokenGrant(await configOf(tv), tokens.refresh_token!);
      expect(refreshed.access_token).toBeTruthy();
    });

    test('a public client (client_id alone) signs in through a live session without a form', async () => {
      const jar = new CookieJar();
      const first = await initiate(cli, 'openid');
      await decide(jar, first.response.user_code, 'allow');
      // The same browser, now signed in: the code answers the approval page without the sign-in form.
      const second = await initiate(cli, 'openid');
      const res = await postPage(jar, s, '/oauth2/device', { user_code: second.response.user_code });
      await expectStatus(res, 303);
      const tokens = await openid.pollDeviceAuthorizationGrant(first.config, {
        ...first.response,
        interval: 0,
      });
      expect(decodeJwt(tokens.access_token).sub).toBe(who.personId);
      expect(tokens.refresh_token).toBeUndefined();
    });

    test("a third-party client: the hosted login's consent, then the device's approval", async () => {
      const game = await s.createClient({
        client_name: 'Third Party Game',
        grant_types: [DEVICE],
        redirect_uris: [],
        first_party: false,
      });
      const jar = new CookieJar();
      const { config, response } = await initiate(game, 'openid');
      const page = await postPage(jar, s, '/oauth2/device', { user_code: response.user_code });
      await expectStatus(page.clone(), 200);
      const consent = await postPage(jar, s, '/oauth2/authorize/login', {
        csrf_token: await csrfOf(page),
        handle: who.handle.value,
        password: who.password,
      });
      await expectStatus(consent.clone(), 200);
      expect(await consent.clone().text()).toContain('Allow Third Party Game access to your account?');
      const allowed = await postPage(jar, s, '/oauth2/authorize/consent', {
        csrf_token: await csrfOf(consent),
        decision: 'allow',
      });
      await expectStatus(allowed.clone(), 303);
      const approval = await jar.fetch(allowed.headers.get('location')!);
      await expectStatus(approval.clone(), 200);
      await expectStatus(
        await postPage(jar, s, '/oauth2/device/approve', {
          csrf_token: await csrfOf(approval),
          decision: 'allow',
        }),
        200,
      );
      const tokens = await openid.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 });
      expect(tokens.claims()?.aud).toBe(game.client_id);
    });

    test('user codes are read regardless of case, dashes and spaces', async () => {
      const jar = new CookieJar();
      const { response } = await initiate(tv);
      const typed = ` ${response.user_code.replace('-', ' ').toLowerCase()} `;
      const approval = await signInForCode(jar, typed);
      await expectStatus(approval.clone(), 200);
      const html = await approval.text();
      expect(html).toContain('Living Room TV');
      expect(html).toContain('data-scope="email"');
    });

    test('denied: access_denied', async () => {
      const jar = new CookieJar();
      const { config, response } = await initiate(tv);
      await decide(jar, response.user_code, 'deny');
      const error = await openid.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(openid.ResponseBodyError);
      expect((error as openid.ResponseBodyError).error).toBe('access_denied');
    });

    test('polling faster than the interval: slow_down, and the interval grows by 5 s', async () => {
      const { response } = await initiate(tv);
      await expectOAuthError(await poll(tv, response.device_code), 400, 'authorization_pending');
      clock.advance(1000);
      await expectOAuthError(await poll(tv, response.device_code), 400, 'slow_down', /10 seconds/);
      clock.advance(6000);
      // 6 s after the last poll: enough before, too soon now.
      await expectOAuthError(await poll(tv, response.device_code), 400, 'slow_down', /15 seconds/);
      clock.advance(15_000);
      await expectOAuthError(await poll(tv, response.device_code), 400, 'authorization_pending');
    });

    test('expired: expired_token, and its user code no longer found', async () => {
      const jar = new CookieJar();
      const { response } = await initiate(tv);
      clock.advance(601_000);
      await expectOAuthError(await poll(tv, response.device_code), 400, 'expired_token');
      const res = await postPage(jar, s, '/oauth2/device', { user_code: response.user_code });
      await expectStatus(res.clone(), 400);
      expect(await res.text()).toContain('This code is not valid');
    });

    test('an unknown or malformed user code is refused with the form again', async () => {
      const jar = new CookieJar();
      for (const typed of ['BCDF-GHJK', 'AEIO-UAEI', '12345678', 'x'.repeat(300)]) {
        const res = await postPage(jar, s, '/oauth2/device', { user_code: typed });
        await expectStatus(res.clone(), 400);
        expect(await res.text()).toMatch(/This code is not valid|at most 256/);
      }
    });

    test("a device code of another client is refused, as unknown (and doesn't touch it)", async () => {
      const jar = new CookieJar();
      const { response } = await initiate(tv);
      await expectOAuthError(
        await poll(cli, response.device_code),
        400,
        'invalid_grant',
        /not a device code of this client/,
      );
      await decide(jar, response.user_code, 'allow');
      await expectOAuthError(await poll(cli, response.device_code), 400, 'invalid_grant');
      const ok = await poll(tv, response.device_code);
      await expectStatus(ok, 200);
    });

    test('a client without the device grant may not start one', async () => {
      const web = await s.createClient();
      const res = await postForm(s, '/oauth2/device_authorization', web, { scope: 'openid' });
      await expectOAuthError(res, 400, 'unauthorized_client', /device_code/);
      const wrongScope = await postForm(s, '/oauth2/device_authorization', tv, { scope: 'admin' });
      await expectOAuthError(wrongScope, 400, 'invalid_scope', /admin/);
    });

    test("another organization's session does not approve: its person must sign in to the client's", async () => {
      const other = await s.service.ctx.orgs.create('Other');
      const as = { orgId: other.organization.id, key: other.apiKey };
      const otherTv = await s.createClient(
        { client_name: 'Other TV', grant_types: [DEVICE], redirect_uris: [] },
        as,
      );
      const stranger = await s.person(as);
      const jar = new CookieJar();
      // The browser signs in to the other organization for its own device.
      const mine = await initiate(otherTv);
      const approval = await signInForCode(jar, mine.response.user_code, stranger);
      await expectStatus(approval, 200);
      // Our organization's code in that browser: the sign-in form of our organization, not an approval.
      const { response } = await initiate(tv);
      const res = await postPage(jar, s, '/oauth2/device', { user_code: response.user_code });
      await expectStatus(res.clone(), 200);
      const csrf = await csrfOf(res);
      // The other organization's person cannot sign in to ours.
      const login = await postPage(jar, s, '/oauth2/authorize/login', {
        csrf_token: csrf,
        handle: stranger.handle.value,
        password: stranger.password,
      });
      await expectStatus(login.clone(), 401);
      expect(await login.text()).toContain('do not match');
      await expectOAuthError(await poll(tv, response.device_code), 400, 'authorization_pending');

      // An approval form of our organization posted with only the other organization's session: refused.
      const victim = new CookieJar();
      const code = await initiate(tv);
      const page = await signInForCode(victim, code.response.user_code);
      const token = await csrfOf(page);
      for (const name of [...victim.cookies.keys()]) if (name.startsWith('sid_')) victim.cookies.delete(name);
      for (const [name, value] of jar.cookies) if (name.startsWith('sid_')) victim.cookies.set(name, value);
      const refused = await postPage(victim, s, '/oauth2/device/approve', {
        csrf_token: token,
        decision: 'allow',
      });
      await expectStatus(refused, 403);
      clock.advance(10_000);
      await expectOAuthError(await poll(tv, code.response.device_code), 400, 'authorization_pending');
    });

    test('the approval form must come from the browser that entered the code', async () => {
      const jar = new CookieJar();
      const { response } = await initiate(tv);
      const page = await signInForCode(jar, response.user_code);
      const token = await csrfOf(page);
      const thief = new CookieJar();
      for (const [name, value] of jar.cookies) if (name.startsWith('sid_')) thief.cookies.set(name, value);
      const refused = await postPage(thief, s, '/oauth2/device/approve', {
        csrf_token: token,
        decision: 'allow',
      });
      await expectStatus(refused, 403);
    });
  });
}
