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
 * A deployment without the factors plugin (PLUGINS narrowed to persons, tokens, password, passkeys): the
 * relying party from PUBLIC_BASE_URL, every passkey sign-in ends with the token at once, and there is
 * no second step to prepare.
 */
const present = chromiumPresent('the passkeys browser test without the factors plugin');

let t: PasskeyService;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  t = await startPasskeyService({ withoutFactors: true });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await t?.stop();
});

describe.skipIf(!present)('passkeys without the factors plugin', () => {
  it('signs in with the token at once, and reports it', async () => {
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      const { answer } = await pageSignIn(tab, { handle: person.handle });
      await expectStatus(answer, 200);
      expect(decodeJwt(answer.json.result.token)).toMatchObject({
        person_id: person.personId,
        authenticated_methods: ['webauthn'],
      });
      const [succeeded] = await t.eventsNamed('AuthenticationSucceeded_v1');
      expect(succeeded).toMatchObject({
        person_id: person.personId,
        success_authn_method: 'webauthn',
        authenticated_methods: ['webauthn'],
        handle: { value: person.handle.value },
      });
    } finally {
      await tab.close();
    }
  });

  it('has no second step to prepare', async () => {
    const res = await t.call('POST', '/authenticate/mfa/webauthn-options', {
      key: null,
      body: { mfa_token: 'anything' },
    });
    await expectStatus(res, 401);
  });
});
