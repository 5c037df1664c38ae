import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { type SsoLogin, startSsoLogin } from './sso-fixture.ts';

/**
 * SSO inside the hosted login, end to end in Debian's headless Chromium (playwright-core): the page's
 * button (or the application's `idp`), a real OpenID provider (oidc-provider on loopback) that signs the
 * person in, the browser landing on the application's loopback callback, and the code exchanged by
 * oauth4webapi. Skipped, with a message, only where no Chromium can be had (.ci/run installs it).
 */
const present = chromiumPresent('the hosted login SSO browser test');

let f: SsoLogin;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  f = await startSsoLogin();
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await f?.stop();
});

/** Runs a fresh browser context; every request outside the service, provider and application is kept. */
async function withPage(run: (page: Page) => Promise<void>): Promise<string[]> {
  const context = await browser.newContext();
  const elsewhere: string[] = [];
  try {
    const page = await context.newPage();
    page.on('request', (r) => {
      const u = r.url();
      if (![f.s.url, f.op.issuer, f.redirectUri].some((o) => u.startsWith(o))) elsewhere.push(u);
    });
    await run(page);
  } finally {
    await context.close();
  }
  return elsewhere;
}

const lastCallback = () => f.landed.filter((u) => u.pathname === '/callback').at(-1)!;

describe.skipIf(!present)('SSO in the hosted login, in Chromium', () => {
  it('signs in through the button and the provider; the client gets verified tokens naming oidc', async () => {
    f.op.state.decision = { sub: 'ada-at-acme', email: 'ada@acme.example', email_verified: true };
    const a = await f.begin();
    const elsewhere = await withPage(async (page) => {
      await page.goto(a.url.href);
      const button = page.getByRole('button', { name: 'Sign in with Acme Staff' });
      expect(await button.count()).toBe(1);
      // Keyboard-usable: the button takes the focus and Enter presses it.
      await button.focus();
      await Promise.all([page.waitForURL(`${f.redirectUri}?**`), page.keyboard.press('Enter')]);
    });
    expect(elsewhere).toEqual([]);
    const callback = lastCallback();
    expect(callback.searchParams.get('state')).toBe(a.state);
    expect(callback.searchParams.get('iss')).toBe(f.s.url);
    const { tokens, claims } = await f.redeem(a, callback);
    expect(claims.nonce).toBe(a.nonce);
    expect(claims.authenticated_methods).toEqual(['oidc']);
    expect(claims.idp).toBe('acme');
    expect(tokens.scope).toBe('openid email read');
  }, 60_000);

  it('goes straight to the provider when the request names the credential with idp', async () => {
    f.op.state.decision = { sub: 'bea-at-acme', email: 'bea@acme.example', email_verified: true };
    const a = await f.begin({ idp: 'acme-app' });
    const seen: string[] = [];
    const elsewhere = await withPage(async (page) => {
      page.on('response', (r) => {
        if (r.url().startsWith(f.s.url)) seen.push(`${r.status()} ${new URL(r.url()).pathname}`);
      });
      await page.goto(a.url.href, { waitUntil: 'commit' });
      await page.waitForURL(`${f.redirectUri}?**`);
    });
    expect(elsewhere).toEqual([]);
    // The login page was never shown: the authorization endpoint redirected at once.
    expect(seen[0]).toBe('303 /oauth2/authorize');
    const { claims } = await f.redeem(a, lastCallback());
    expect(claims.authenticated_methods).toEqual(['oidc']);
    expect(claims.nonce).toBe(a.nonce);
  }, 60_000);
});
