// acr asked for as an essential claim (OpenID Connect Core 5.5.1.1): a sign-in that does not meet it
// is a failed authentication, never a token carrying another acr.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { ACR } from '../../../../core/tokens/authentication-context.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, exchange, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

let s: AuthorizeService;
let client: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
  who = await s.person();
});
afterAll(() => s.stop());

const asking = (acr: Record<string, unknown>) => ({ claims: JSON.stringify({ id_token: { acr } }) });

describe('an essential acr', () => {
  test('a session short of it does not answer; the sign-in that cannot meet it is refused', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    const twoFactors = asking({ essential: true, values: [ACR.multiFactor] });
    const none = await authorize(jar, s, client.client_id, { prompt: 'none', ...twoFactors });
    expect((await callbackOf(none.res)).get('error')).toBe('login_required');

    const asked = await authorize(jar, s, client.client_id, twoFactors);
    await expectStatus(asked.res.clone(), 200);
    const res = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(asked.res),
      handle: who.handle.value,
      password: who.password,
    });
    const refused = await callbackOf(res);
    expect(refused.get('error')).toBe('access_denied');
    expect(refused.get('error_description')).toContain(ACR.multiFactor);
    expect(refused.get('code')).toBeNull();
  });

  test('a failed sign-in starts no session', async () => {
    const jar = new CookieJar();
    const signed = await signIn(jar, s, client.client_id, who, asking({ essential: true, value: 'gold' }));
    expect((await callbackOf(signed.res)).get('error')).toBe('access_denied');
    expect(jar.session()).toBeUndefined();
  });

  test('met, or asked without essential, answers a code and the acr met', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    for (const acr of [
      { essential: true, values: [ACR.multiFactor, ACR.oneFactor] },
      { essential: true, value: ACR.oneFactor },
      { values: [ACR.multiFactor] },
      { essential: true },
    ]) {
      const silent = await authorize(jar, s, client.client_id, { prompt: 'none', ...asking(acr) });
      const code = (await callbackOf(silent.res)).get('code');
      expect(code).toBeTruthy();
      const res = await exchange(s, client, code!, silent.verifier);
      await expectStatus(res, 200);
      expect(decodeJwt(String(res.json.id_token)).acr).toBe(ACR.oneFactor);
    }
  });
});
