import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type ResetTestService, resetService } from './fixture.ts';

/**
 * The reset completed as a person would: the link from the message that reached the SMTP server,
 * opened in Debian's headless Chromium (playwright-core), the form filled and sent. Skipped, with a
 * message, only where no Chromium can be had.
 */
const present = chromiumPresent('the password reset browser test');

let svc: ResetTestService;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  svc = await resetService();
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await svc?.stop();
});

describe.skipIf(!present)('the hosted reset page in Chromium', () => {
  it('sets a new password from the emailed link; the new one signs in and the old one does not', async () => {
    await svc.addPerson('ada@example.com', 'correct horse battery staple');
    await expectStatus(await svc.requestReset({ type: 'email_address', value: 'ada@example.com' }), 202);
    const { link } = await svc.message(1);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
      });
      const opened = await page.goto(link);
      expect(opened?.status()).toBe(200);
      expect(await page.title()).toBe('Choose a new password for Acme');
      // The inline stylesheet applied (allowed by its hash), and nothing was refused by the CSP.
      const background = await page.locator('button').evaluate((b) => getComputedStyle(b).backgroundColor);
      expect(background).toBe('rgb(29, 78, 216)');

      await page.fill('#password', 'correct horse battery');
      await page.fill('#password_confirm', 'a different one');
      await page.click('button[type=submit]');
      await page.waitForSelector('p.error');
      expect(await page.locator('p.error').textContent()).toBe(
        'The two passwords differ. Type the same new password twice.',
      );

      await page.fill('#password', 'a new passphrase for ada');
      await page.fill('#password_confirm', 'a new passphrase for ada');
      await page.click('button[type=submit]');
      await page.waitForSelector('p.done');
      expect(await page.locator('h1').textContent()).toBe('Your password has been changed');
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
    await expectStatus(await svc.signIn('ada@example.com', 'a new passphrase for ada'), 200);
    await expectStatus(await svc.signIn('ada@example.com', 'correct horse battery staple'), 401);
  });
});
