import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { storedPasskey } from '../factors/stored-passkey.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from './fixture.ts';
import { CookieJar, csrfOf, postPage, signIn } from './sessions/browser-jar.ts';

/**
 * The hosted login's second step says what failed in the factor's own words: a passkey that does not
 * verify is not "a code that is not right". By HTTP, with an assertion that verifies nothing (the
 * ceremony itself runs in Chromium in passkey-browser.test.ts).
 */
let s: AuthorizeService;
let client: MadeClient;

beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
  await expectStatus(
    await s.call('PUT', '/organizations/authentication-policy', {
      body: { first_factors: ['password'], second_factor: 'required', second_factors: ['webauthn', 'totp'] },
    }),
    200,
  );
});
afterAll(() => s.stop());

describe('a refused passkey on the second step', () => {
  test('is said to be a passkey that could not be verified (401), and AuthenticationFailed_v1 names webauthn', async () => {
    const who = await s.person();
    await storedPasskey(s.service.ctx.storage, s.org.id, who.personId);
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    await expectStatus(first.res.clone(), 200);
    const res = await postPage(jar, s, '/oauth2/authorize/second-factor/passkey', {
      csrf_token: await csrfOf(first.res),
      challenge_id: crypto.randomUUID(),
      response: JSON.stringify({
        id: 'AAAA',
        rawId: 'AAAA',
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' },
      }),
    });
    const html = await res.clone().text();
    await expectStatus(res, 401);
    expect(html).toContain('That passkey could not be verified.');
    expect(html).not.toContain('That code is not right');
    const failed = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed.at(-1)).toMatchObject({ person_id: who.personId, failed_authn_method: 'webauthn' });
  });

  test('a wrong code still says the code is not right', async () => {
    const who = await s.person();
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    const res = await postPage(jar, s, '/oauth2/authorize/second-factor', {
      csrf_token: await csrfOf(first.res),
      method: 'totp',
      code: '000000',
    });
    const html = await res.clone().text();
    await expectStatus(res, 401);
    expect(html).toContain('That code is not right');
  });
});
