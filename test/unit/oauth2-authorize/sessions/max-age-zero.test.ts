// max_age=0 (OpenID Connect Core 3.1.2.1, as the working group settled it: "equivalent to
// prompt=login"): a session, however fresh, does not answer; the person signs in again.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

// The clock stands still: the session is signed in "this very second".
const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  client = await s.createClient();
  who = await s.person();
});
afterAll(() => s.stop());

describe('max_age=0', () => {
  test('shows the login page even to a session signed in this second', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    const again = await authorize(jar, s, client.client_id, { max_age: '0' });
    await expectStatus(again.res.clone(), 200);
    const res = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(again.res),
      handle: who.handle.value,
      password: who.password,
    });
    expect((await callbackOf(res)).get('code')).toBeTruthy();
  });

  test('with prompt=none answers login_required', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    const none = await authorize(jar, s, client.client_id, { max_age: '0', prompt: 'none' });
    expect((await callbackOf(none.res)).get('error')).toBe('login_required');
    // A max_age the session meets still answers.
    const within = await authorize(jar, s, client.client_id, { max_age: '60', prompt: 'none' });
    expect((await callbackOf(within.res)).get('code')).toBeTruthy();
  });
});
