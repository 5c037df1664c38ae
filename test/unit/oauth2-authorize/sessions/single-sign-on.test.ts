// Sign-in sessions of the hosted login (OpenID Connect Core 3.1.2.1 prompt and max_age, 2 ID token
// claims): one sign-in answers every client of the organization until it ends.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, exchange, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

const clock = manualClock(Date.now());
let s: AuthorizeService;
let first: MadeClient;
let second: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  first = await s.createClient({ client_name: 'First App' });
  second = await s.createClient({ client_name: 'Second App' });
  who = await s.person();
});
afterAll(() => s.stop());

/** The ID token a code exchange answers. */
async function idTokenOf(client: MadeClient, code: string, verifier: string) {
  const res = await exchange(s, client, code, verifier);
  expect(res.status, res.text).toBe(200);
  return decodeJwt(String(res.json.id_token));
}

describe('single sign-on across the organization (OIDC Basic OP: oidcc-prompt-none-logged-in)', () => {
  test('a sign-in sets the session cookie: HttpOnly, SameSite=Lax, per organization', async () => {
    const jar = new CookieJar();
    const { res } = await signIn(jar, s, first.client_id, who);
    await expectStatus(res, 303);
    const line = res.headers.getSetCookie().find((c) => c.startsWith('sid_'));
    expect(line).toContain('HttpOnly');
    expect(line).toContain('SameSite=Lax');
    expect(line).toContain(`sid_${s.org.id.replaceAll('-', '')}=`);
  });

  test('another client gets a code without a page, in the same session (sid, auth_time, amr)', async () => {
    const jar = new CookieJar();
    const signed = await signIn(jar, s, first.client_id, who);
    const firstParams = await callbackOf(signed.res);
    const firstToken = await idTokenOf(first, firstParams.get('code')!, signed.verifier);
    clock.advance(5000);

    const silent = await authorize(jar, s, second.client_id);
    const params = await callbackOf(silent.res);
    expect(params.get('state')).toBe(silent.state);
    const token = await idTokenOf(second, params.get('code')!, silent.verifier);
    expect(token.aud).toBe(second.client_id);
    expect(token.sid).toBe(firstToken.sid);
    expect(typeof token.sid).toBe('string');
    expect(token.auth_time).toBe(firstToken.auth_time);
    expect(token.amr).toEqual(['pwd']);
    expect(token.nonce).toBe(silent.nonce);
  });

  test('prompt=none answers a code with a session and login_required without one', async () => {
    const jar = new CookieJar();
    const none = await authorize(jar, s, second.client_id, { prompt: 'none' });
    const refused = await callbackOf(none.res);
    expect(refused.get('error')).toBe('login_required');
    expect(refused.get('state')).toBe(none.state);

    await signIn(jar, s, first.client_id, who);
    const silent = await authorize(jar, s, second.client_id, { prompt: 'none' });
    expect((await callbackOf(silent.res)).get('code')).toBeTruthy();
  });

  test('prompt=login shows the page even with a session (oidcc-prompt-login)', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, who);
    const again = await authorize(jar, s, second.client_id, { prompt: 'login' });
    await expectStatus(again.res, 200);
  });

  test('max_age: an older sign-in is asked again, and auth_time moves on (oidcc-max-age-1)', async () => {
    const jar = new CookieJar();
    const signed = await signIn(jar, s, first.client_id, who);
    const before = await idTokenOf(first, (await callbackOf(signed.res)).get('code')!, signed.verifier);
    clock.advance(3000);
    const within = await authorize(jar, s, second.client_id, { max_age: '3600' });
    expect((await callbackOf(within.res)).get('code')).toBeTruthy();
    const old = await authorize(jar, s, second.client_id, { max_age: '1' });
    await expectStatus(old.res.clone(), 200);
    const res = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(old.res),
      handle: who.handle.value,
      password: who.password,
    });
    const after = await idTokenOf(second, (await callbackOf(res)).get('code')!, old.verifier);
    expect(after.sid).toBe(before.sid);
    expect(Number(after.auth_time)).toBeGreaterThan(Number(before.auth_time));
    clock.advance(2000);
    const none = await authorize(jar, s, second.client_id, { prompt: 'none', max_age: '1' });
    expect((await callbackOf(none.res)).get('error')).toBe('login_required');
  });

  test('a forged cookie or another organization’s is no session', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, who);
    const [, value] = jar.session()!;
    const { organization, apiKey } = await s.service.ctx.orgs.create('Other');
    const other = await s.createClient({}, { orgId: organization.id, key: apiKey });
    const copied = new CookieJar();
    copied.cookies.set(`sid_${organization.id.replaceAll('-', '')}`, value);
    const refused = await authorize(copied, s, other.client_id, { prompt: 'none' });
    expect((await callbackOf(refused.res)).get('error')).toBe('login_required');
    const forged = new CookieJar();
    forged.cookies.set(`sid_${s.org.id.replaceAll('-', '')}`, 'A'.repeat(43));
    const none = await authorize(forged, s, second.client_id, { prompt: 'none' });
    expect((await callbackOf(none.res)).get('error')).toBe('login_required');
  });

  test('response_mode=form_post answers an auto-submitting page under a strict CSP', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, who);
    const posted = await authorize(jar, s, second.client_id, { response_mode: 'form_post' });
    await expectStatus(posted.res.clone(), 200);
    const html = await posted.res.text();
    expect(html).toContain('method="post" action="http://127.0.0.1:9/callback"');
    expect(html).toMatch(/name="code" value="[^"]+"/);
    expect(html).toContain(`name="state" value="${posted.state}"`);
    const csp = posted.res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'sha256-[^']+'/);
    expect(csp).toContain("default-src 'none'");
  });
});

describe('consent for third-party clients (first_party false)', () => {
  test('asked once, remembered, revoked through the API; prompt=none says consent_required', async () => {
    const third = await s.createClient({ client_name: 'Third Party', first_party: false });
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, who);
    const none = await authorize(jar, s, third.client_id, { prompt: 'none' });
    expect((await callbackOf(none.res)).get('error')).toBe('consent_required');

    const asked = await authorize(jar, s, third.client_id);
    await expectStatus(asked.res.clone(), 200);
    const html = await asked.res.clone().text();
    expect(html).toContain('Third Party');
    const denied = await postPage(jar, s, '/oauth2/authorize/consent', {
      csrf_token: await csrfOf(asked.res),
      decision: 'deny',
    });
    expect((await callbackOf(denied)).get('error')).toBe('access_denied');

    const again = await authorize(jar, s, third.client_id);
    const allowed = await postPage(jar, s, '/oauth2/authorize/consent', {
      csrf_token: await csrfOf(again.res),
      decision: 'allow',
    });
    expect((await callbackOf(allowed)).get('code')).toBeTruthy();
    const silent = await authorize(jar, s, third.client_id, { prompt: 'none' });
    expect((await callbackOf(silent.res)).get('code')).toBeTruthy();

    const revoked = await s.call('DELETE', `/persons/${who.personId}/oauth2-consents/${third.client_id}`);
    await expectStatus(revoked, 204);
    const after = await authorize(jar, s, third.client_id, { prompt: 'none' });
    expect((await callbackOf(after.res)).get('error')).toBe('consent_required');
  });

  test('a consent answered from another browser changes nothing', async () => {
    const third = await s.createClient({ client_name: 'Third Party', first_party: false });
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, who);
    const asked = await authorize(jar, s, third.client_id);
    const csrf = await csrfOf(asked.res);
    const stranger = new CookieJar();
    const res = await postPage(stranger, s, '/oauth2/authorize/consent', {
      csrf_token: csrf,
      decision: 'allow',
    });
    await expectStatus(res, 403);
  });
});

describe('the claims parameter and acr_values (oidcc-claims-essential, OIDC Core 5.5)', () => {
  test('members asked for the ID token are answered, within the scopes granted', async () => {
    const jar = new CookieJar();
    const asker = await s.person();
    await signIn(jar, s, first.client_id, asker);
    const claims = JSON.stringify({
      id_token: { username: null },
      userinfo: { username: { essential: true } },
    });
    const asked = await authorize(jar, s, second.client_id, { scope: 'openid username', claims });
    const code = (await callbackOf(asked.res)).get('code')!;
    const res = await exchange(s, second, code, asked.verifier);
    expect(res.status, res.text).toBe(200);
    expect(decodeJwt(String(res.json.id_token)).username).toBe(asker.handle.value);
    const info = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${res.json.access_token}` },
    });
    await expectStatus(info.clone(), 200);
    expect((await info.json()).username).toBe(asker.handle.value);
  });

  test('without the parameter, scope openid alone answers no handle', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, await s.person());
    const asked = await authorize(jar, s, second.client_id, { scope: 'openid' });
    const res = await exchange(s, second, (await callbackOf(asked.res)).get('code')!, asked.verifier);
    expect(decodeJwt(String(res.json.id_token)).username).toBeUndefined();
  });

  test('a claims parameter that is not a JSON object is invalid_request, naming the rule', async () => {
    const jar = new CookieJar();
    const asked = await authorize(jar, s, second.client_id, { claims: '{"id_token": [1]}' });
    const params = await callbackOf(asked.res);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toContain('claims.id_token');
  });

  test('acr_values puts the level met in acr', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, first.client_id, await s.person());
    const asked = await authorize(jar, s, second.client_id, {
      acr_values: 'urn:identity-service:acr:2fa urn:identity-service:acr:1fa',
    });
    const res = await exchange(s, second, (await callbackOf(asked.res)).get('code')!, asked.verifier);
    expect(decodeJwt(String(res.json.id_token)).acr).toBe('urn:identity-service:acr:1fa');
  });
});

describe('id_token_hint (oidcc-id-token-hint)', () => {
  test("answers for the hint's person, login_required for another's, invalid_request for a forged one", async () => {
    const ada = await s.person();
    const jar = new CookieJar();
    const signed = await signIn(jar, s, first.client_id, ada);
    const tokens = await exchange(s, first, (await callbackOf(signed.res)).get('code')!, signed.verifier);
    expect(tokens.status, tokens.text).toBe(200);
    const hint = String(tokens.json.id_token);
    const same = await authorize(jar, s, second.client_id, { prompt: 'none', id_token_hint: hint });
    expect((await callbackOf(same.res)).get('code')).toBeTruthy();

    const bob = await s.person();
    const other = new CookieJar();
    await signIn(other, s, first.client_id, bob);
    const mismatch = await authorize(other, s, second.client_id, { prompt: 'none', id_token_hint: hint });
    expect((await callbackOf(mismatch.res)).get('error')).toBe('login_required');

    const [h, p] = hint.split('.');
    const forged = await authorize(jar, s, second.client_id, {
      prompt: 'none',
      id_token_hint: `${h}.${p}.AAAA`,
    });
    expect((await callbackOf(forged.res)).get('error')).toBe('invalid_request');
  });
});
