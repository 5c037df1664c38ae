import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, discover, type MadeClient, opts, startAuthorizeService } from './fixture.ts';

/**
 * The hosted login in Debian's headless Chromium, driven by playwright-core: the page as a person sees
 * it (the CSP lets its one stylesheet apply and nothing else load), the form submitted, the browser
 * landing on the application's real loopback callback, and the code exchanged by oauth4webapi.
 * Skipped, with a message, only where no Chromium can be had (.ci/run installs it).
 */
const present = chromiumPresent('the hosted login browser test');

let s: AuthorizeService;
let browser: Browser;
let client: MadeClient;
/** The application: a real loopback server that receives the browser after the login. */
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
  s = await startAuthorizeService();
  client = await s.createClient({ redirect_uris: [redirectUri] });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  app?.stop(true);
});

async function begin(as: oauth.AuthorizationServer) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid read',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { url, verifier, state, nonce };
}

describe.skipIf(!present)('the hosted login in Chromium', () => {
  it('signs in through the page and lands on the application with a code the client exchanges', async () => {
    const as = await discover(s);
    const person = await s.person();
    const { url, verifier, state, nonce } = await begin(as);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      const elsewhere: string[] = [];
      page.on('console', (m) => {
        // The 401 of the wrong password below is the page's own answer, not a problem.
        if (m.type() === 'error' && !m.text().includes('status of 401')) problems.push(m.text());
      });
      page.on('request', (r) => {
        if (!r.url().startsWith(s.url) && !r.url().startsWith(redirectUri)) elsewhere.push(r.url());
      });
      const res = await page.goto(url.href);
      await expectStatus({ status: res?.status() ?? 0 }, 200);
      expect(await page.title()).toBe('Sign in to Acme App');
      // The inline stylesheet applied: the CSP's hash matches it.
      const background = await page
        .locator('form.login button')
        .evaluate((b) => getComputedStyle(b).backgroundColor);
      expect(background).toBe('rgb(37, 99, 235)');

      await page.fill('#handle', person.handle.value);
      await page.fill('#password', 'not the password');
      await page.click('form.login button[type=submit]');
      await page.waitForSelector('.error');
      expect(await page.locator('.error').textContent()).toBe('The handle and password do not match.');

      await page.fill('#password', person.password);
      await Promise.all([page.waitForURL(`${redirectUri}?**`), page.click('form.login button[type=submit]')]);
      expect(await page.locator('p').textContent()).toBe('signed in');
      expect(problems).toEqual([]);
      expect(elsewhere).toEqual([]);

      const callback = landed.filter((u) => u.pathname === '/callback').at(-1)!;
      expect(callback.searchParams.get('state')).toBe(state);
      const params = oauth.validateAuthResponse(as, { client_id: client.client_id }, callback, state);
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        { client_id: client.client_id },
        await oauth.authorizationCodeGrantRequest(
          as,
          { client_id: client.client_id },
          oauth.ClientSecretBasic(client.client_secret!),
          params,
          redirectUri,
          verifier,
          opts,
        ),
        { expectedNonce: nonce, requireIdToken: true },
      );
      expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: person.personId, nonce });
    } finally {
      await context.close();
    }
  }, 60_000);

  it('"Email me a sign-in code" sends the handle typed, without a password, to the code page', async () => {
    const { url } = await begin(await discover(s));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      await page.goto(url.href);
      await page.fill('#handle', 'nobody-in-chromium@example.com');
      // The password field is required for the password button, not for this one (formnovalidate).
      await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
      await page.waitForSelector('h1:has-text("Check your email")');
      expect(await page.locator('.note').first().textContent()).toContain('nobody-in-chromium@example.com');
      expect(await page.locator('input[name=challenge_id]').getAttribute('value')).toMatch(/^[0-9a-f-]{36}$/);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('cannot be framed by another site', async () => {
    const as = await discover(s);
    const { url } = await begin(as);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      // The application's origin embeds the login page: the browser must refuse to render it there.
      await page.goto(redirectUri);
      await page.setContent(`<iframe id="f" src="${url.href}" width="400" height="400"></iframe>`);
      await page.waitForTimeout(1000);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const rendered = frame
        ? await frame
            .locator('form')
            .count()
            .catch(() => 0)
        : 0;
      expect(rendered).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);
});
