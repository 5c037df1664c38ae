import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as openid from 'openid-client';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  type MadeClient,
  obtainCode,
  openLogin,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';
import { sessionMaker } from './session-fixture.ts';

const LOGGED_OUT = 'http://127.0.0.1:9/logged-out';
const clock = manualClock(Date.now());
let s: AuthorizeService;
let sessions: ReturnType<typeof sessionMaker>;
let client: MadeClient;
let other: CallOptions;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  sessions = sessionMaker(s, clock);
  client = await s.createClient({ post_logout_redirect_uris: [LOGGED_OUT, `${LOGGED_OUT}?from=app`] });
  const made = await s.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
});
afterAll(() => s.stop());

/** A person with an ID token for the client (through the hosted login) and a session in this browser. */
async function signedIn(as: CallOptions = {}, c: MadeClient = client) {
  const person = await s.person(as);
  const { code, verifier } = await obtainCode(s, c, {}, person);
  const tokens = await exchange(s, c, code, verifier);
  await expectStatus(tokens, 200);
  const orgId = as.orgId ?? s.org.id;
  const started = await sessions.start(person.personId, { orgId, clients: [c.client_id] });
  return { person, idToken: String(tokens.json.id_token), ...started };
}

const logout = (params: Record<string, string>, cookie = '', init: RequestInit = {}) =>
  fetch(`${s.url}/oauth2/logout?${new URLSearchParams(params)}`, {
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
    ...init,
  });

/** Posts a form to the logout endpoint as the browser would (its cookies, its Origin unless given). */
const postLogout = (form: Record<string, string>, cookie = '', headers: Record<string, string> = {}) =>
  fetch(`${s.url}/oauth2/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url, cookie, ...headers },
    body: new URLSearchParams(form).toString(),
  });

const loggedOutOf = (personId: string) =>
  s.events.filter((e) => e.event_metadata.event_name === 'PersonLoggedOut_v1' && e.person_id === personId);

async function expectEnded(secret: string, orgId = s.org.id) {
  expect(await sessions.store.find(orgId, secret)).toBeUndefined();
}
async function expectLive(secret: string, orgId = s.org.id) {
  expect(await sessions.store.find(orgId, secret)).toBeDefined();
}

/** The confirmation page's token and cookie. */
async function confirmation(res: Response) {
  await expectStatus(res, 200);
  const html = await res.text();
  const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no confirmation form in ${html.slice(0, 400)}`);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { html, token, cookie };
}

describe('RP-Initiated Logout with an id_token_hint', () => {
  it('ends the browser session and redirects to the registered URI with state', async () => {
    const u = await signedIn();
    const res = await logout(
      { id_token_hint: u.idToken, post_logout_redirect_uri: LOGGED_OUT, state: 'af0ifjsldkj' },
      u.cookie,
      { headers: { cookie: u.cookie, 'user-agent': 'Logout browser' } },
    );
    await expectStatus(res, 303);
    expect(res.headers.get('location')).toBe(`${LOGGED_OUT}?state=af0ifjsldkj`);
    expect(res.headers.get('set-cookie')).toMatch(
      new RegExp(`^${sessions.cookies.nameOf(s.org.id)}=;.*Max-Age=0`),
    );
    await expectEnded(u.secret);
    await s.eventsNamed('PersonLoggedOut_v1');
    expect(loggedOutOf(u.person.personId)).toHaveLength(1);
    expect(loggedOutOf(u.person.personId)[0]).toMatchObject({
      browser_metadata: { user_agent: 'Logout browser' },
    });
  });

  it("keeps the registered URI's own query, and shows a signed-out page without one", async () => {
    const u = await signedIn();
    const res = await logout(
      { id_token_hint: u.idToken, post_logout_redirect_uri: `${LOGGED_OUT}?from=app`, state: 'a b' },
      u.cookie,
    );
    await expectStatus(res, 303);
    expect(res.headers.get('location')).toBe(`${LOGGED_OUT}?from=app&state=a+b`);
    const v = await signedIn();
    const page = await logout({ id_token_hint: v.idToken }, v.cookie);
    await expectStatus(page, 200);
    expect(await page.text()).toContain('You are signed out');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    await expectEnded(v.secret);
  });

  it('ends the session a real sign-in started: the next prompt=none needs a login', async () => {
    const person = await s.person();
    const as = await discover(s);
    const first = await authorizationUrl(as, client.client_id);
    const opened = await openLogin(first.url);
    const signedInRes = await submitLogin(s.url, opened, person.handle.value, person.password);
    await expectStatus(signedInRes, 303);
    const sid = signedInRes.headers
      .getSetCookie()
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith(sessions.cookies.nameOf(s.org.id)));
    if (!sid) throw new Error(`the sign-in set no session cookie: ${signedInRes.headers.getSetCookie()}`);
    const code = new URL(signedInRes.headers.get('location')!).searchParams.get('code')!;
    const tokens = await exchange(s, client, code, first.verifier);
    await expectStatus(tokens, 200);
    const idToken = String(tokens.json.id_token);
    expect(decodeJwt(idToken).sid).toEqual(expect.any(String));

    const silent = async () => {
      const { url } = await authorizationUrl(as, client.client_id, { prompt: 'none' });
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: sid } });
      await expectStatus(res, [302, 303]);
      return new URL(res.headers.get('location')!).searchParams;
    };
    expect((await silent()).get('code')).toEqual(expect.any(String));
    const res = await logout({ id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT }, sid);
    await expectStatus(res, 303);
    expect((await silent()).get('error')).toBe('login_required');
    await s.eventsNamed('PersonLoggedOut_v1');
    expect(loggedOutOf(person.personId)).toHaveLength(1);
  });

  it("answers openid-client's end-session URL, found through discovery", async () => {
    const u = await signedIn();
    const config = await openid.discovery(new URL(s.url), client.client_id, client.client_secret, undefined, {
      execute: [openid.allowInsecureRequests],
    });
    const url = openid.buildEndSessionUrl(config, {
      id_token_hint: u.idToken,
      post_logout_redirect_uri: LOGGED_OUT,
      state: 'from-openid-client',
    });
    expect(`${url.origin}${url.pathname}`).toBe(`${s.url}/oauth2/logout`);
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: u.cookie } });
    await expectStatus(res, 303);
    expect(res.headers.get('location')).toBe(`${LOGGED_OUT}?state=from-openid-client`);
    await expectEnded(u.secret);
  });

  it('takes the same request by POST', async () => {
    const u = await signedIn();
    const res = await postLogout(
      { id_token_hint: u.idToken, client_id: client.client_id, post_logout_redirect_uri: LOGGED_OUT },
      u.cookie,
      { origin: 'http://127.0.0.1:9' },
    );
    await expectStatus(res, 303);
    expect(res.headers.get('location')).toBe(LOGGED_OUT);
    await expectEnded(u.secret);
  });

  it('accepts an expired hint', async () => {
    const u = await signedIn();
    clock.advance(2 * 86_400_000);
    expect(decodeJwt(u.idToken).exp! * 1000).toBeLessThan(clock.now());
    await sessions.store.served(u.session.sessionId, client.client_id);
    const res = await logout({ id_token_hint: u.idToken, post_logout_redirect_uri: LOGGED_OUT }, u.cookie);
    await expectStatus(res, 303);
    await expectEnded(u.secret);
  });

  it('refuses a post_logout_redirect_uri the client did not register, with a page and no redirect', async () => {
    const u = await signedIn();
    for (const uri of [
      `${LOGGED_OUT}/`,
      'http://127.0.0.1:9/LOGGED-OUT',
      'https://evil.example/logged-out',
    ]) {
      const res = await logout({ id_token_hint: u.idToken, post_logout_redirect_uri: uri }, u.cookie);
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.text()).toContain('is not one of the post_logout_redirect_uris');
    }
    await expectLive(u.secret);
  });

  it("refuses a URI registered by another client than the hint's", async () => {
    const second = await s.createClient({ post_logout_redirect_uris: ['http://127.0.0.1:9/second'] });
    const u = await signedIn();
    const res = await logout(
      { id_token_hint: u.idToken, post_logout_redirect_uri: 'http://127.0.0.1:9/second' },
      u.cookie,
    );
    await expectStatus(res, 400);
    // Naming that client does not help: the hint was not issued to it.
    const named = await logout(
      {
        id_token_hint: u.idToken,
        client_id: second.client_id,
        post_logout_redirect_uri: 'http://127.0.0.1:9/second',
      },
      u.cookie,
    );
    await expectStatus(named, 400);
    expect(await named.text()).toContain('is not the client the id_token_hint was issued to');
    await expectLive(u.secret);
  });

  it("refuses a hint of another organization presented for this organization's client", async () => {
    const theirs = await s.createClient({ post_logout_redirect_uris: [LOGGED_OUT] }, other);
    const them = await signedIn(other, theirs);
    const mine = await signedIn();
    const res = await logout(
      { id_token_hint: them.idToken, client_id: client.client_id, post_logout_redirect_uri: LOGGED_OUT },
      `${mine.cookie}; ${them.cookie}`,
    );
    await expectStatus(res, 400);
    await expectLive(mine.secret);
    await expectLive(them.secret, String(other.orgId));
    // On its own, their hint ends their organization's session of this browser, never this one's.
    const own = await logout({ id_token_hint: them.idToken }, `${mine.cookie}; ${them.cookie}`);
    await expectStatus(own, 200);
    await expectEnded(them.secret, String(other.orgId));
    await expectLive(mine.secret);
  });

  it('refuses what is not an ID token of this service: identity tokens, access tokens, junk', async () => {
    const u = await signedIn();
    const identity = await s.call('POST', '/authenticate/password', {
      key: null,
      body: { handle: u.person.handle, password: u.person.password },
    });
    await expectStatus(identity, 200);
    const { code, verifier } = await obtainCode(s, client, {}, u.person);
    const access = String((await exchange(s, client, code, verifier)).json.access_token);
    const [h, p] = u.idToken.split('.');
    for (const hint of [identity.json.result.token, access, `${h}.${p}.AAAA`, 'not-a-jwt']) {
      const res = await logout({ id_token_hint: hint }, u.cookie);
      await expectStatus(res, 400);
      expect(await res.text()).toContain('not an ID token issued by this service');
    }
    await expectLive(u.secret);
  });

  it('asks first when the hint names another person than the one signed in here', async () => {
    const u = await signedIn();
    const someoneElse = await signedIn();
    const res = await logout({ id_token_hint: someoneElse.idToken }, u.cookie);
    const { html } = await confirmation(res);
    expect(html).toContain('Sign out?');
    await expectLive(u.secret);
  });

  it('refuses a parameter given twice', async () => {
    const u = await signedIn();
    const res = await fetch(`${s.url}/oauth2/logout?id_token_hint=${u.idToken}&state=a&state=b`, {
      redirect: 'manual',
      headers: { cookie: u.cookie },
    });
    await expectStatus(res, 400);
    expect(await res.text()).toContain('state must be given at most once');
    await expectLive(u.secret);
  });
});

describe('RP-Initiated Logout without a hint', () => {
  it('asks, and the confirmation ends the session of the client organization and redirects', async () => {
    const u = await signedIn();
    const asked = await logout(
      { client_id: client.client_id, post_logout_redirect_uri: LOGGED_OUT, state: 'xyz' },
      u.cookie,
    );
    const c = await confirmation(asked);
    // The redirect that follows the form is allowed by the page's form-action.
    expect(asked.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9");
    await expectLive(u.secret);
    const res = await postLogout(
      {
        csrf_token: c.token,
        client_id: client.client_id,
        post_logout_redirect_uri: LOGGED_OUT,
        state: 'xyz',
      },
      `${u.cookie}; ${c.cookie}`,
    );
    await expectStatus(res, 303);
    expect(res.headers.get('location')).toBe(`${LOGGED_OUT}?state=xyz`);
    await expectEnded(u.secret);
    await s.eventsNamed('PersonLoggedOut_v1');
    expect(loggedOutOf(u.person.personId)).toHaveLength(1);
  });

  it('without a client, ends every session this browser carries', async () => {
    const theirs = await s.createClient({}, other);
    const them = await signedIn(other, theirs);
    const mine = await signedIn();
    const cookies = `${mine.cookie}; ${them.cookie}`;
    const c = await confirmation(await logout({}, cookies));
    const res = await postLogout({ csrf_token: c.token }, `${cookies}; ${c.cookie}`);
    await expectStatus(res, 200);
    expect(await res.text()).toContain('You are signed out');
    const cleared = res.headers.getSetCookie();
    expect(cleared).toHaveLength(2);
    await expectEnded(mine.secret);
    await expectEnded(them.secret, String(other.orgId));
  });

  it('ends nothing on a cross-site POST without the confirmation token', async () => {
    const u = await signedIn();
    const c = await confirmation(await logout({ client_id: client.client_id }, u.cookie));
    // Another site's form: the SameSite=Strict cookie is not sent, and its Origin is its own.
    const forged = [
      postLogout({ csrf_token: c.token }, u.cookie, { origin: 'https://evil.example' }),
      postLogout({ csrf_token: c.token, client_id: client.client_id }, u.cookie),
      postLogout({ csrf_token: 'x'.repeat(43) }, `${u.cookie}; ${c.cookie}`),
      postLogout({ client_id: client.client_id }, u.cookie, { origin: 'https://evil.example' }),
    ];
    const [otherOrigin, noCookie, wrongToken, noToken] = await Promise.all(forged);
    for (const res of [otherOrigin!, noCookie!, wrongToken!]) {
      await expectStatus(res, 403);
      expect(await res.text()).toContain('nothing was signed out');
    }
    // Without a token it is a request, which only asks.
    await confirmation(noToken!);
    await expectLive(u.secret);
    expect(loggedOutOf(u.person.personId)).toHaveLength(0);
  });

  it('refuses post_logout_redirect_uri without a client to check it against', async () => {
    const res = await logout({ post_logout_redirect_uri: LOGGED_OUT });
    await expectStatus(res, 400);
    expect(await res.text()).toContain('needs client_id or id_token_hint');
  });
});
