import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type EmailTestService, emailService } from './fixture.ts';

/**
 * The sign-in link followed as a person would: the link from the message that reached the SMTP server,
 * opened in Debian's headless Chromium (playwright-core), its button pressed; the caller that asked
 * polls meanwhile. Skipped, with a message, only where no Chromium can be had.
 */
const present = chromiumPresent('the email sign-in link browser test');

let svc: EmailTestService;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  svc = await emailService({ listen: true });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await svc?.stop();
});

describe.skipIf(!present)('the sign-in link page in Chromium', () => {
  it('confirms the sign-in only when its button is pressed; the polling caller then gets the token', async () => {
    const personId = await svc.addPerson('ada@example.com');
    const started = await svc.start('ada@example.com', 'email_link');
    await expectStatus(started, 202);
    const { challenge_id } = started.json.result;
    const { link } = await svc.link(1);
    expect(link.startsWith(`${svc.baseUrl}/email/sign-in?token=`)).toBe(true);

    // A mail scanner fetches the link first: a page, and nothing confirmed.
    await expectStatus(await fetch(link), 200);
    await expectStatus(await svc.verify({ challenge_id }), 202);

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
      });
      const opened = await page.goto(link);
      expect(opened?.status()).toBe(200);
      expect(await page.title()).toBe('Sign in to Acme');
      const background = await page.locator('button').evaluate((b) => getComputedStyle(b).backgroundColor);
      expect(background).toBe('rgb(29, 78, 216)');
      await expectStatus(await svc.verify({ challenge_id }), 202);

      await page.click('button[type=submit]');
      await page.waitForSelector('p.done');
      expect(await page.title()).toBe('Sign-in confirmed');
      expect(refused).toEqual([]);

      const done = await svc.verify({ challenge_id });
      await expectStatus(done, 200);
      expect(done.json.result.person_id).toBe(personId);

      // Opened again once the caller has its token: the link is spent.
      await page.goto(link);
      expect(await page.locator('p.error').textContent()).toContain('used already');
    } finally {
      await context.close();
    }
  });
});
