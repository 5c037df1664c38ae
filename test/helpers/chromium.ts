import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { testTls } from './tls.ts';

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

/**
 * Starts the headless browser the tests drive through playwright-core. It finds the test servers on
 * *.hooks.test at 127.0.0.1 and accepts the test certificate (by its key), as a developer's browser
 * would with a hosts entry and the test CA installed.
 */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-background-networking',
      '--host-resolver-rules=MAP hooks.test 127.0.0.1, MAP *.hooks.test 127.0.0.1',
      `--ignore-certificate-errors-spki-list=${testCertificateKeyHash()}`,
    ],
  });
}

/** The base64 SHA-256 of the test certificate's public key, as Chromium's SPKI allow-list takes it. */
function testCertificateKeyHash(): string {
  const spki = new X509Certificate(testTls().certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}
