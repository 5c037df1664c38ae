import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as openid from 'openid-client';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from './fixture.ts';

/**
 * A pushed authorization request (RFC 9126) signed in through the hosted login in headless Chromium:
 * openid-client pushes the request, the browser goes to the authorization endpoint with client_id and
 * request_uri only, the person signs in on the page, the browser lands on the application's real
 * loopback callback, and openid-client exchanges the code. The same URL opened again is refused.
 */
const present = chromiumPresent('the pushed authorization request browser test');

let s: AuthorizeService;
let browser: Browser;
let client: MadeClient;
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
  // A client that may only sign in by pushed requests.
  client = await s.createClient({
    redirect_uris: [redirectUri],
    require_pushed_authorization_requests: true,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  app?.stop(true);
});

describe.skipIf(!present)('a pushed authorization request in Chromium', () => {
  it('signs in through the page and the client exchanges the code; the request_uri is then spent', async () => {
    const config = await openid.discovery(new URL(s.url), client.client_id, client.client_secret, undefined, {
      execute: [openid.allowInsecureRequests],
    });
    const verifier = openid.randomPKCECodeVerifier();
    const state = openid.randomState();
    const nonce = openid.randomNonce();
    const url = await openid.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      state,
      nonce,
      code_challenge: await openid.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const person = await s.person();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      const res = await page.goto(url.href);
      await expectStatus({ status: res?.status() ?? 0 }, 200);
      expect(await page.title()).toBe('Sign in to Acme App');
      await page.fill('#handle', person.handle.value);
      await page.fill('#password', person.password);
      await Promise.all([page.waitForURL(`${redirectUri}?**`), page.click('form.login button[type=submit]')]);
      expect(await page.locator('p').textContent()).toBe('signed in');
      expect(problems).toEqual([]);

      const callback = landed.filter((u) => u.pathname === '/callback').at(-1)!;
      const tokens = await openid.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      expect(tokens.claims()?.sub).toBe(person.personId);

      // The same URL again (the back button, a replay): the error page, nothing sent to the application.
      const before = landed.length;
      const again = await page.goto(url.href);
      await expectStatus({ status: again?.status() ?? 0 }, 400);
      expect(await page.locator('body').textContent()).toContain('invalid_request_uri');
      expect(landed.length).toBe(before);
    } finally {
      await context.close();
    }
  }, 60_000);
});
