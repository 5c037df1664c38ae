// Sign-in sessions and consents of the hosted login on two replicas sharing one Postgres, behind one
// public URL (the first's): what a browser started on one replica is honoured by the other, as a load
// balancer sends its requests to either.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  type MadeClient,
  startAuthorizeService,
} from '../unit/oauth2-authorize/fixture.ts';
import {
  CookieJar,
  callbackOf,
  csrfOf,
  postPage,
  signIn,
} from '../unit/oauth2-authorize/sessions/browser-jar.ts';
import { isolatedPostgres } from './support.ts';

let a: AuthorizeService;
let b: AuthorizeService;
let drop: () => Promise<void>;
let first: MadeClient;
let second: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;
/** Calls of the organization's API, on either replica. */
let as: { orgId: string; key: string };

beforeAll(async () => {
  const pg = await isolatedPostgres('oauth2_sessions');
  drop = pg.drop;
  a = await startAuthorizeService({ storage: pg.storage });
  b = await startAuthorizeService({ storage: await pg.another(), env: { PUBLIC_BASE_URL: a.url } });
  as = { orgId: a.org.id, key: a.apiKey };
  first = await a.createClient({ client_name: 'First App' });
  second = await a.createClient({ client_name: 'Second App' });
  who = await a.person();
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await drop?.();
});

/** An authorization request of the client sent by the browser to one replica (the public URL's path). */
async function authorizeAt(
  jar: CookieJar,
  replica: AuthorizeService,
  clientId: string,
  extra: Record<string, string> = {},
) {
  const request = await authorizationUrl(await discover(a), clientId, extra);
  const url = new URL(`${request.url.pathname}${request.url.search}`, replica.url);
  return { res: await jar.fetch(url), ...request };
}

/** The ID token of a code exchanged at one replica. */
async function idTokenAt(replica: AuthorizeService, client: MadeClient, code: string, verifier: string) {
  const res = await exchange(replica, client, code, verifier);
  await expectStatus(res, 200);
  return decodeJwt(String(res.json.id_token));
}

describe('sign-in sessions on two replicas sharing Postgres', () => {
  test('a session started on replica A answers prompt=none on replica B with a code, no page', async () => {
    const jar = new CookieJar();
    const signed = await signIn(jar, a, first.client_id, who);
    const started = await idTokenAt(a, first, (await callbackOf(signed.res)).get('code')!, signed.verifier);

    const silent = await authorizeAt(jar, b, second.client_id, { prompt: 'none' });
    const params = await callbackOf(silent.res);
    expect(params.get('error')).toBeNull();
    expect(params.get('state')).toBe(silent.state);
    expect(params.get('iss')).toBe(a.url);
    // B's code is redeemed at A: codes are shared too.
    const token = await idTokenAt(a, second, params.get('code')!, silent.verifier);
    expect(token.aud).toBe(second.client_id);
    expect(token.sub).toBe(who.personId);
    expect(token.sid).toBe(started.sid);
    expect(token.auth_time).toBe(started.auth_time);

    // Another browser on B has no session.
    const stranger = await authorizeAt(new CookieJar(), b, second.client_id, { prompt: 'none' });
    expect((await callbackOf(stranger.res)).get('error')).toBe('login_required');
  });

  test('a sign-in asked again on B (prompt=login) renews the session A then answers with', async () => {
    const jar = new CookieJar();
    const signed = await signIn(jar, a, first.client_id, who);
    const before = await idTokenAt(a, first, (await callbackOf(signed.res)).get('code')!, signed.verifier);
    const [name, oldValue] = jar.session()!;
    const again = await authorizeAt(jar, b, second.client_id, { prompt: 'login' });
    await expectStatus(again.res.clone(), 200);
    const res = await jar.fetch(`${b.url}/oauth2/authorize/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: a.url },
      body: new URLSearchParams({
        csrf_token: await csrfOf(again.res),
        handle: who.handle.value,
        password: who.password,
      }).toString(),
    });
    await idTokenAt(b, second, (await callbackOf(res)).get('code')!, again.verifier);
    // The cookie B set (a new value) is the session's on A.
    const silent = await authorizeAt(jar, a, first.client_id, { prompt: 'none' });
    const token = await idTokenAt(a, first, (await callbackOf(silent.res)).get('code')!, silent.verifier);
    expect(token.sid).toBe(before.sid);
    // The value before the renewal no longer opens the session, on either replica.
    expect(jar.session()![1]).not.toBe(oldValue);
    for (const replica of [a, b]) {
      const copied = new CookieJar();
      copied.cookies.set(name, oldValue);
      const stale = await authorizeAt(copied, replica, first.client_id, { prompt: 'none' });
      expect((await callbackOf(stale.res)).get('error')).toBe('login_required');
    }
  });

  test('a consent given on A is honoured on B; revoked through B, A asks again', async () => {
    const partner = await a.createClient({ client_name: 'Partner App', first_party: false });
    const jar = new CookieJar();
    await signIn(jar, a, first.client_id, who);

    const none = await authorizeAt(jar, b, partner.client_id, { prompt: 'none' });
    expect((await callbackOf(none.res)).get('error')).toBe('consent_required');

    const asked = await authorizeAt(jar, a, partner.client_id);
    await expectStatus(asked.res.clone(), 200);
    expect(await asked.res.clone().text()).toContain('Partner App');
    const allowed = await postPage(jar, a, '/oauth2/authorize/consent', {
      csrf_token: await csrfOf(asked.res),
      decision: 'allow',
    });
    expect((await callbackOf(allowed)).get('code')).toBeTruthy();

    const silent = await authorizeAt(jar, b, partner.client_id, { prompt: 'none' });
    const code = (await callbackOf(silent.res)).get('code');
    expect(code).toBeTruthy();
    expect((await idTokenAt(b, partner, code!, silent.verifier)).aud).toBe(partner.client_id);

    const listed = await b.call('GET', `/persons/${who.personId}/oauth2-consents`, as);
    await expectStatus(listed, 200);
    expect(listed.json.result.map((c: { client_id: string }) => c.client_id)).toEqual([partner.client_id]);
    await expectStatus(
      await b.call('DELETE', `/persons/${who.personId}/oauth2-consents/${partner.client_id}`, as),
      204,
    );
    const after = await authorizeAt(jar, a, partner.client_id, { prompt: 'none' });
    expect((await callbackOf(after.res)).get('error')).toBe('consent_required');
  });

  test('a consent page opened on A is answered on B', async () => {
    const partner = await a.createClient({ client_name: 'Partner Two', first_party: false });
    const jar = new CookieJar();
    await signIn(jar, a, first.client_id, who);
    const asked = await authorizeAt(jar, a, partner.client_id);
    await expectStatus(asked.res.clone(), 200);
    const res = await jar.fetch(`${b.url}/oauth2/authorize/consent`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: a.url },
      body: new URLSearchParams({ csrf_token: await csrfOf(asked.res), decision: 'allow' }).toString(),
    });
    const code = (await callbackOf(res)).get('code');
    expect(code).toBeTruthy();
    expect((await idTokenAt(a, partner, code!, asked.verifier)).sub).toBe(who.personId);
  });
});
