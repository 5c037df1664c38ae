import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's headless Chromium, or CHROMIUM_PATH. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run here. Where no Chromium can be had they are skipped, and `what`
 * (such as "the /docs browser test") is named in a warning so the skip is seen (.ci/run installs it).
 */
export function chromiumPresent(what: string): boolean {
  const present = existsSync(CHROMIUM);
  if (!present) console.warn(`skipping ${what}: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);
  return present;
}

/** Starts the headless browser the tests drive through playwright-core. */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'],
  });
}
