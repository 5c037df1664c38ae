// A `sub` asked for with a value in the claims parameter (OpenID Connect Core 5.5.1): no ID token or
// access token for anyone else, even the person signed in in this browser.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, exchange, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

let s: AuthorizeService;
let client: MadeClient;
let ada: Awaited<ReturnType<AuthorizeService['person']>>;
let bob: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
  ada = await s.person();
  bob = await s.person();
});
afterAll(() => s.stop());

const naming = (sub: unknown, where: 'id_token' | 'userinfo' = 'id_token') => ({
  claims: JSON.stringify({ [where]: { sub } }),
});

describe('the claims parameter naming a subject', () => {
  test("another person's session does not answer: prompt=none is login_required", async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, ada);
    for (const where of ['id_token', 'userinfo'] as const) {
      const none = await authorize(jar, s, client.client_id, {
        prompt: 'none',
        ...naming({ value: bob.personId }, where),
      });
      expect((await callbackOf(none.res)).get('error')).toBe('login_required');
    }
    const listed = await authorize(jar, s, client.client_id, {
      prompt: 'none',
      ...naming({ values: [bob.personId, 'someone-else'] }),
    });
    expect((await callbackOf(listed.res)).get('error')).toBe('login_required');
  });

  test('the person named is answered from the session; a sub asked without a value is no condition', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, ada);
    for (const sub of [
      { value: ada.personId },
      { values: [bob.personId, ada.personId] },
      null,
      { essential: true },
    ]) {
      const silent = await authorize(jar, s, client.client_id, { prompt: 'none', ...naming(sub) });
      const code = (await callbackOf(silent.res)).get('code');
      expect(code).toBeTruthy();
      const res = await exchange(s, client, code!, silent.verifier);
      await expectStatus(res, 200);
      expect(decodeJwt(String(res.json.id_token)).sub).toBe(ada.personId);
    }
  });

  test('the login page for the person named; someone else signing in gets nothing', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, ada);
    const asked = await authorize(jar, s, client.client_id, naming({ value: bob.personId }));
    await expectStatus(asked.res.clone(), 200);
    const wrong = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(asked.res),
      handle: ada.handle.value,
      password: ada.password,
    });
    const refused = await callbackOf(wrong);
    expect(refused.get('error')).toBe('access_denied');
    expect(refused.get('code')).toBeNull();
    expect(refused.get('error_description')).toContain('sub');

    const again = await authorize(jar, s, client.client_id, naming({ value: bob.personId }));
    const right = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(again.res),
      handle: bob.handle.value,
      password: bob.password,
    });
    const code = (await callbackOf(right)).get('code');
    const res = await exchange(s, client, code!, again.verifier);
    await expectStatus(res, 200);
    expect(decodeJwt(String(res.json.id_token)).sub).toBe(bob.personId);
  });
});
