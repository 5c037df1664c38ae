import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { FIRST_FACTORS } from '../../../core/factors/policy.ts';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { virtualAuthenticator } from '../passkeys/fixture.ts';
import {
  type AuthorizeService,
  discover,
  type MadeClient,
  openLogin,
  opts,
  startAuthorizeService,
} from './fixture.ts';

/**
 * Passkeys in the hosted login, in headless Chromium with a CDP virtual authenticator: the offer after
 * a password sign-in registers one, the passkey button signs in on another client of the organization,
 * the policy hides and refuses it, and a passkey answers the second step.
 */
const present = chromiumPresent('the hosted login passkey test');

let s: AuthorizeService;
let browser: Browser;
let clientA: MadeClient;
let clientB: MadeClient;
let app: ReturnType<typeof Bun.serve>;
const landed: URL[] = [];
let redirectUri: string;

beforeAll(async () => {
  if (!present) return;
  app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      landed.push(new URL(request.url));
      return new Response('<!doctype html><title>App</title><p>signed in</p>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  redirectUri = `http://127.0.0.1:${app.port}/callback`;
  // The offer is the policy's by default (PASSKEY_HOSTED_LOGIN_OFFER=policy): no setting needed.
  s = await startAuthorizeService({ localhost: true });
  clientA = await s.createClient({ redirect_uris: [redirectUri] });
  clientB = await s.createClient({ redirect_uris: [redirectUri] });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  app?.stop(true);
});

async function begin(as: oauth.AuthorizationServer, client: MadeClient) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url, verifier, state, nonce };
}

/** The client's ID token claims for the code the browser landed with. */
async function exchanged(
  as: oauth.AuthorizationServer,
  client: MadeClient,
  started: Awaited<ReturnType<typeof begin>>,
) {
  const callback = landed.filter((u) => u.searchParams.get('state') === started.state).at(-1);
  if (!callback) throw new Error(`the browser did not land with state ${started.state}: ${landed.join(' ')}`);
  const c = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(as, c, callback, started.state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    as,
    c,
    await oauth.authorizationCodeGrantRequest(
      as,
      c,
      oauth.ClientSecretBasic(client.client_secret!),
      params,
      redirectUri,
      started.verifier,
      opts,
    ),
    { expectedNonce: started.nonce, requireIdToken: true },
  );
  return oauth.getValidatedIdTokenClaims(tokens)!;
}

const landing = () => `${redirectUri}?**`;

/** PUT /organizations/authentication-policy. */
async function setPolicy(body: Record<string, unknown>) {
  await expectStatus(await s.call('PUT', '/organizations/authentication-policy', { body }), 200);
}
const DEFAULT_POLICY = { first_factors: [...FIRST_FACTORS], second_factor: 'off' };

describe.skipIf(!present)('passkeys in the hosted login', () => {
  it('signs in with the passkey button on a client of the organization, amr holding hwk', async () => {
    const as = await discover(s);
    const person = await s.person();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await virtualAuthenticator(context, page);
      // A password sign-in, then the offer: the passkey is made in the page and the client gets its code.
      const first = await begin(as, clientA);
      await page.goto(first.url.href);
      expect(await page.getAttribute('#handle', 'autocomplete')).toBe('username webauthn');
      await page.fill('#handle', person.handle.value);
      await page.fill('#password', person.password);
      await page.click('form.login button[type=submit]');
      await page.waitForSelector('text=Add a passkey?');
      await Promise.all([page.waitForURL(landing()), page.click('#passkey button')]);
      expect((await exchanged(as, clientA, first)).amr).toContain('pwd');
      const listed = await s.call('GET', `/persons/${person.personId}/credentials`);
      await expectStatus(listed, 200);
      expect(JSON.stringify(listed.json)).toContain('webauthn');
      await context.clearCookies();
      await page.goto('about:blank');

      // Passkey autofill: Chromium's virtual authenticator answers the conditional request at once.
      const autofill = await begin(as, clientA);
      await Promise.all([page.waitForURL(landing()), page.goto(autofill.url.href)]);
      expect((await exchanged(as, clientA, autofill)).amr).toContain('hwk');

      // Logged out (no session cookie), on a browser without conditional mediation: the button.
      await context.clearCookies();
      await page.addInitScript(() => {
        Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: undefined });
      });
      const second = await begin(as, clientB);
      await page.goto(second.url.href);
      await page.waitForSelector('#passkey button', { state: 'visible' });
      await Promise.all([page.waitForURL(landing()), page.click('#passkey button')]);
      const claims = await exchanged(as, clientB, second);
      expect(claims.sub).toBe(person.personId);
      expect(claims.amr).toContain('hwk');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('continues at once on "Not now", with one code only', async () => {
    const as = await discover(s);
    const person = await s.person();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const started = await begin(as, clientA);
      await page.goto(started.url.href);
      await page.fill('#handle', person.handle.value);
      await page.fill('#password', person.password);
      await page.click('form.login button[type=submit]');
      await page.waitForSelector('text=Add a passkey?');
      const csrf = await page.locator('form.sso input[name=csrf_token]').getAttribute('value');
      await Promise.all([page.waitForURL(landing()), page.click('text=Not now')]);
      expect((await exchanged(as, clientA, started)).sub).toBe(person.personId);
      // The same answer again (a replay from this browser) issues no second code.
      const cookie = (await context.cookies(s.url)).map((c) => `${c.name}=${c.value}`).join('; ');
      const again = await fetch(`${s.url}/oauth2/authorize/passkey/offer`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: s.url },
        body: new URLSearchParams({ csrf_token: csrf ?? '', decision: 'skip' }).toString(),
      });
      await expectStatus(again, 400);
      const listed = await s.call('GET', `/persons/${person.personId}/credentials`);
      expect(JSON.stringify(listed.json)).not.toContain('webauthn');
    } finally {
      await context.close();
    }
  }, 60_000);

  it('takes a passkey as the second step after a password', async () => {
    const as = await discover(s);
    const person = await s.person();
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await virtualAuthenticator(context, page);
      // No autofill: the password is the first factor here.
      await page.addInitScript(() => {
        Object.defineProperty(PublicKeyCredential, 'isConditionalMediationAvailable', { value: undefined });
      });
      const signIn = async () => {
        const started = await begin(as, clientA);
        await page.goto(started.url.href);
        await page.fill('#handle', person.handle.value);
        await page.fill('#password', person.password);
        await page.click('form.login button[type=submit]');
        return started;
      };
      await signIn();
      await page.waitForSelector('text=Add a passkey?');
      await Promise.all([page.waitForURL(landing()), page.click('#passkey button')]);
      await context.clearCookies();
      await page.goto('about:blank');

      await setPolicy({ ...DEFAULT_POLICY, second_factor: 'required', second_factors: ['webauthn'] });
      const started = await signIn();
      await page.waitForSelector('text=Confirm it is you');
      await Promise.all([page.waitForURL(landing()), page.click('#passkey button')]);
      const amr = (await exchanged(as, clientA, started)).amr;
      expect(amr).toContain('pwd');
      expect(amr).toContain('hwk');
    } finally {
      await setPolicy(DEFAULT_POLICY);
      await context.close();
    }
  }, 60_000);

  it('is neither offered nor taken when the policy leaves passkeys out', async () => {
    const as = await discover(s);
    await setPolicy({ ...DEFAULT_POLICY, first_factors: ['password'] });
    try {
      const { url } = await begin(as, clientA);
      const opened = await openLogin(url);
      expect(opened.html).not.toContain('id="passkey"');
      expect(opened.html).toContain('autocomplete="username"');
      const res = await fetch(`${s.url}/oauth2/authorize/passkey`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: opened.cookie,
          origin: s.url,
        },
        body: new URLSearchParams({
          csrf_token: opened.csrfToken,
          challenge_id: crypto.randomUUID(),
          response: '{}',
        }).toString(),
      });
      await expectStatus(res, 403);
      expect(await res.text()).toContain('Signing in with a passkey is not offered here.');
    } finally {
      await setPolicy(DEFAULT_POLICY);
    }
  });
});
