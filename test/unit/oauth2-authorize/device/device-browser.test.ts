import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as openid from 'openid-client';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../../helpers/chromium.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from '../fixture.ts';

/**
 * The device grant with the person in Debian's headless Chromium (playwright-core): the device (openid-
 * client) starts an authorization, the person opens verification_uri_complete, confirms the code, signs
 * in on the hosted login, allows the device on the approval page; the device's poll gets the tokens.
 * Skipped, with a message, only where no Chromium can be had.
 */
const present = chromiumPresent('the device page browser test');
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

let s: AuthorizeService;
let browser: Browser;
let cli: MadeClient;

beforeAll(async () => {
  if (!present) return;
  s = await startAuthorizeService();
  cli = await s.createClient({
    client_name: 'Acme CLI',
    grant_types: [DEVICE],
    redirect_uris: [],
    public: true,
  });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
});

describe.skipIf(!present)('the device page in Chromium', () => {
  it('enters the code, signs in, allows: the device gets its tokens', async () => {
    const person = await s.person();
    const config = await openid.discovery(new URL(s.url), cli.client_id, undefined, openid.None(), {
      execute: [openid.allowInsecureRequests],
    });
    const response = await openid.initiateDeviceAuthorization(config, { scope: 'openid' });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      const opened = await page.goto(response.verification_uri_complete!);
      await expectStatus({ status: opened?.status() ?? 0 }, 200);
      expect(await page.inputValue('#user_code')).toBe(response.user_code);
      await page.click('button[type=submit]');
      await page.waitForSelector('#password');
      expect(await page.title()).toBe('Sign in to Acme CLI');
      await page.fill('#handle', person.handle.value);
      await page.fill('#password', person.password);
      await Promise.all([page.waitForURL('**/oauth2/device/callback?**'), page.click('button[type=submit]')]);
      expect(await page.locator('h1').textContent()).toBe('Allow Acme CLI on your device?');
      await page.click('button[value=allow]');
      await page.waitForSelector('text=Device connected');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
    const tokens = await openid.pollDeviceAuthorizationGrant(config, { ...response, interval: 0 });
    expect(tokens.claims()?.sub).toBe(person.personId);
  }, 60_000);
});
