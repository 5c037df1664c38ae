import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { FIRST_FACTORS } from '../../../core/factors/policy.ts';
import { passkeyOfferDeclines } from '../../../plugins/passkeys/schema.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from './fixture.ts';
import { CookieJar, callbackOf, csrfOf, postPage, signIn } from './sessions/browser-jar.ts';

/**
 * Who decides on the hosted login's "Add a passkey?": the organization's policy by default
 * (PASSKEY_HOSTED_LOGIN_OFFER=policy), with "Not now" remembered for the person; `off` never asks.
 * By HTTP: the offer's page is what is looked at, not the ceremony (passkey-browser.test.ts runs it).
 */
let s: AuthorizeService;
let off: AuthorizeService;
let client: MadeClient;
let offClient: MadeClient;

beforeAll(async () => {
  // On localhost: pages served from an IP address never offer passkeys.
  s = await startAuthorizeService({ localhost: true });
  off = await startAuthorizeService({ localhost: true, env: { PASSKEY_HOSTED_LOGIN_OFFER: 'off' } });
  client = await s.createClient();
  offClient = await off.createClient();
});
afterAll(async () => {
  await s.stop();
  await off.stop();
});

const OFFER = 'Add a passkey?';

async function setPolicy(first_factors: string[]) {
  const res = await s.call('PUT', '/organizations/authentication-policy', {
    body: { first_factors, second_factor: 'off' },
  });
  await expectStatus(res, 200);
}

describe('the offer to add a passkey after a sign-in', () => {
  test('is made by default when the policy allows passkeys, and not again after "Not now"', async () => {
    await setPolicy([...FIRST_FACTORS]);
    const who = await s.person();
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    const page = await first.res.clone().text();
    await expectStatus(first.res.clone(), 200);
    expect(page).toContain(OFFER);
    const skipped = await postPage(jar, s, '/oauth2/authorize/passkey/offer', {
      csrf_token: await csrfOf(first.res),
      decision: 'skip',
    });
    expect((await callbackOf(skipped)).get('code')).toBeTruthy();

    // The next sign-in, in a fresh browser too: straight back to the client.
    const again = await signIn(new CookieJar(), s, client.client_id, who, { prompt: 'login' });
    expect((await callbackOf(again.res)).get('code')).toBeTruthy();
    // Another person of the organization is still asked.
    const other = await signIn(new CookieJar(), s, client.client_id, await s.person());
    await expectStatus(other.res.clone(), 200);
    expect(await other.res.text()).toContain(OFFER);
  });

  test('is not made when the policy leaves passkeys out of the first factors', async () => {
    await setPolicy(['password']);
    try {
      const res = (await signIn(new CookieJar(), s, client.client_id, await s.person())).res;
      expect((await callbackOf(res)).get('code')).toBeTruthy();
    } finally {
      await setPolicy([...FIRST_FACTORS]);
    }
  });

  test('is never made with PASSKEY_HOSTED_LOGIN_OFFER=off', async () => {
    const res = (await signIn(new CookieJar(), off, offClient.client_id, await off.person())).res;
    expect((await callbackOf(res)).get('code')).toBeTruthy();
  });

  test('"Not now" is forgotten with the person: deleting the person deletes it', async () => {
    const who = await s.person();
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    await postPage(jar, s, '/oauth2/authorize/passkey/offer', {
      csrf_token: await csrfOf(first.res),
      decision: 'skip',
    });
    const t = passkeyOfferDeclines;
    const rows = () => s.service.ctx.storage.db.select().from(t).where(eq(t.personId, who.personId));
    expect(await rows()).toHaveLength(1);
    await expectStatus(await s.call('DELETE', `/persons/${who.personId}`), 204);
    expect(await rows()).toHaveLength(0);
  });
});
