import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { chromiumPresent, launchChromium } from '../helpers/chromium.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/**
 * /docs rendered by a real headless Chromium with every request outside the service refused: the page
 * must draw the operations from the service alone. Skipped, with a message, where Chromium is absent.
 */
const present = chromiumPresent('the /docs browser test');

let t: TestService;
let server: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  if (!present) return;
  t = await startTestService();
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.service.fetch });
});
afterAll(async () => {
  if (!present) return;
  server.stop(true);
  await t.stop();
});

describe.skipIf(!present)('the docs page in a browser', () => {
  it('renders the operations with no request leaving the service', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const origin = `http://127.0.0.1:${server.port}`;
      const elsewhere: string[] = [];
      const problems: string[] = [];
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
        elsewhere.push(url);
        return route.abort();
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      const res = await page.goto(`${origin}/docs`);
      await expectStatus({ status: res?.status() ?? 0 }, 200);
      await page.waitForSelector('.opblock-summary-path', { timeout: 20_000 });
      const paths = await page.locator('.opblock-summary-path').allTextContents();
      expect(paths.map((p) => p.replace(/\u200b/g, ''))).toContain('/organizations');
      if (process.env.DOCS_SCREENSHOT)
        await page.screenshot({ path: process.env.DOCS_SCREENSHOT, fullPage: false });
      expect(elsewhere).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
