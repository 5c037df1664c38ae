// A sign-in session's two lifetimes (OAUTH2_SESSION_IDLE_SECONDS, OAUTH2_SESSION_MAX_SECONDS) on the
// fixture clock: each authorization it answers renews the idle one; nothing passes the absolute end.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, signIn } from './browser-jar.ts';

const IDLE = 300;
const MAX = 900;
const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
let other: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService({
    clock,
    env: { OAUTH2_SESSION_IDLE_SECONDS: String(IDLE), OAUTH2_SESSION_MAX_SECONDS: String(MAX) },
  });
  client = await s.createClient();
  other = await s.createClient({ client_name: 'Other App' });
  who = await s.person();
});
afterAll(() => s.stop());

/** What prompt=none answers the browser: a code, or the error. */
async function silently(jar: CookieJar, clientId = client.client_id) {
  const params = await callbackOf((await authorize(jar, s, clientId, { prompt: 'none' })).res);
  return params.get('code') ? 'code' : params.get('error');
}

/** The person's one session as GET /persons/{person_id}/sessions answers it. */
async function sessionOf(personId: string) {
  const res = await s.call('GET', `/persons/${personId}/sessions`);
  await expectStatus(res, 200);
  expect(res.json.result).toHaveLength(1);
  return res.json.result[0] as { last_active_at: string; expires_at: string; clients: string[] };
}

describe('sign-in session lifetimes', () => {
  test('unused for the idle lifetime, the session ends', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    clock.advance((IDLE - 5) * 1000);
    expect(await silently(jar)).toBe('code');
    // That use renewed it: another idle lifetime less a little still answers.
    clock.advance((IDLE - 5) * 1000);
    expect(await silently(jar)).toBe('code');
    clock.advance((IDLE + 1) * 1000);
    expect(await silently(jar)).toBe('login_required');
  });

  test('used all along, it still ends at the absolute lifetime', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    let elapsed = 0;
    while (elapsed + 200 < MAX) {
      clock.advance(200_000);
      elapsed += 200;
      expect(await silently(jar)).toBe('code');
    }
    clock.advance((MAX - elapsed + 1) * 1000);
    expect(await silently(jar)).toBe('login_required');
  });
});

describe("recording a session's uses (at most once a minute, every client at once)", () => {
  test('a use within a minute of the last one recorded writes no new last use', async () => {
    const someone = await s.person();
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, someone);
    const signedIn = await sessionOf(someone.personId);
    clock.advance(30_000);
    expect(await silently(jar)).toBe('code');
    expect((await sessionOf(someone.personId)).last_active_at).toBe(signedIn.last_active_at);
    // A minute after the one recorded: this use is recorded, and the idle end moves with it.
    clock.advance(30_000);
    expect(await silently(jar)).toBe('code');
    const used = await sessionOf(someone.personId);
    expect(Date.parse(used.last_active_at)).toBe(Date.parse(signedIn.last_active_at) + 60_000);
    expect(Date.parse(used.expires_at)).toBe(Date.parse(used.last_active_at) + IDLE * 1000);
  });

  test('a use left unrecorded still leaves the session alive at any use within the idle lifetime', async () => {
    const someone = await s.person();
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, someone);
    clock.advance(59_000);
    expect(await silently(jar)).toBe('code');
    // The idle end is the recorded use's (the sign-in's): less than a minute before that use's own.
    clock.advance((IDLE - 60) * 1000);
    expect(await silently(jar)).toBe('code');
    clock.advance((IDLE + 1) * 1000);
    expect(await silently(jar)).toBe('login_required');
  });

  test('a client the session had not served is recorded at once, within the minute', async () => {
    const someone = await s.person();
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, someone);
    clock.advance(5_000);
    expect(await silently(jar, other.client_id)).toBe('code');
    expect((await sessionOf(someone.personId)).clients.sort()).toEqual(
      [client.client_id, other.client_id].sort(),
    );
  });
});
