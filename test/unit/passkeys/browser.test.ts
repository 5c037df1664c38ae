import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  openPasskeyPage,
  type PasskeyService,
  pageSignIn,
  registerPasskey,
  startPasskeyService,
} from './fixture.ts';

/**
 * Passkeys end to end in Debian's headless Chromium (playwright-core) with a CDP virtual authenticator
 * (CTAP2, internal, resident keys, user verification): a page on http://localhost:<port> asks the API
 * for options and answers with navigator.credentials.create / get. Skipped, with a message, only where
 * no Chromium can be had.
 */
const present = chromiumPresent('the passkeys browser test');

let t: PasskeyService;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  t = await startPasskeyService();
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await t?.stop();
});

describe.skipIf(!present)('passkeys in Chromium with a virtual authenticator', () => {
  it('registers a passkey and signs in with it without a handle', async () => {
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      const made = await registerPasskey(t, tab, person.personId, 'Laptop');
      expect(made.name).toBe('Laptop');
      const held = await tab.credentials();
      expect(held).toHaveLength(1);
      expect(held[0]?.isResidentCredential).toBe(true);
      expect(held[0]?.rpId).toBe('localhost');

      const { options, answer } = await pageSignIn(tab);
      // Discoverable: no credential is listed, the authenticator finds the person's own.
      expect(options.json.result.options.allowCredentials ?? []).toEqual([]);
      expect(options.json.result.options.rpId).toBe('localhost');
      await expectStatus(answer, 200);
      expect(answer.json.result.person_id).toBe(person.personId);
      const claims = decodeJwt(answer.json.result.token);
      expect(claims.person_id).toBe(person.personId);
      expect(claims.authenticated_methods).toEqual(['webauthn']);

      const succeeded = await t.eventsNamed('AuthenticationSucceeded_v1');
      expect(succeeded.find((e) => e.person_id === person.personId)).toMatchObject({
        success_authn_method: 'webauthn',
        authenticated_methods: ['webauthn'],
      });
      // The sign counter the authenticator reported is kept, and the last use recorded.
      const listed = await t.service.ctx.hooks.run(
        (await import('../../../core/factors/credentials.ts')).personCredentials,
        { orgId: t.org.id, personId: person.personId },
      );
      const mine = listed.flat().find((c) => c.credentialId === made.credential_id);
      expect(mine).toMatchObject({ type: 'webauthn', name: 'Laptop', firstFactor: true, secondFactor: true });
      expect(mine?.lastUsedAt).toBeNumber();
      expect((await tab.credentials())[0]?.signCount).toBe(2);
    } finally {
      await tab.close();
    }
  });
});
