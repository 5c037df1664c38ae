// A sign-in session's two lifetimes (OAUTH2_SESSION_IDLE_SECONDS, OAUTH2_SESSION_MAX_SECONDS) on the
// fixture clock: each authorization it answers renews the idle one; nothing passes the absolute end.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { manualClock } from '../../../helpers/clock.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, signIn } from './browser-jar.ts';

const IDLE = 300;
const MAX = 900;
const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService({
    clock,
    env: { OAUTH2_SESSION_IDLE_SECONDS: String(IDLE), OAUTH2_SESSION_MAX_SECONDS: String(MAX) },
  });
  client = await s.createClient();
  who = await s.person();
});
afterAll(() => s.stop());

/** What prompt=none answers the browser: a code, or the error. */
async function silently(jar: CookieJar) {
  const params = await callbackOf((await authorize(jar, s, client.client_id, { prompt: 'none' })).res);
  return params.get('code') ? 'code' : params.get('error');
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
