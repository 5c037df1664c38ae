import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { Browser } from 'playwright-core';
import { checkSecondFactor } from '../../../core/factors/second-factor.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
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
 * Passkeys with an organization's policy and a second step, in Chromium with a virtual authenticator:
 * the relying party and origins read from `authenticationPolicies` at each ceremony, and the passkey
 * as the second factor (`checkSecondFactor` for webauthn). The factors plugin's part is played by its
 * stand-in (factors-stand-in.ts).
 */
const present = chromiumPresent('the passkeys policy browser test');

let t: PasskeyService;
let browser: Browser;

beforeAll(async () => {
  if (!present) return;
  t = await startPasskeyService({ factors: true });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await t?.stop();
});

const rc: RequestContext = {
  clientIp: '127.0.0.1',
  analytics: { clientIpAddress: '127.0.0.1' },
  browser: { user_agent: '', window_location: '', service_sdk_version: '' },
};

describe.skipIf(!present)('passkeys under an organization policy', () => {
  it('takes the relying party and origins from the policy, and refuses an assertion for another RP', async () => {
    const base = t.factors.policyOf(t.org.id);
    t.factors.policies.set(t.org.id, {
      ...base,
      webauthn: { rpId: 'localhost', rpName: 'Acme passkeys', origins: [t.otherOrigin] },
    });
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t, t.otherOrigin);
    try {
      const opts = await t.call(
        'POST',
        `/persons/${person.personId}/credentials/webauthn/registration-options`,
      );
      await expectStatus(opts, 200);
      expect(opts.json.result.options.rp).toEqual({ name: 'Acme passkeys', id: 'localhost' });
      // The origin the policy lists (not PUBLIC_BASE_URL's) is the one that counts now.
      await registerPasskey(t, tab, person.personId);

      const options = await tab.api('/authenticate/webauthn/options', {});
      const response = await tab.get(options.json.result.options);
      // The policy moves the relying party before the answer arrives: an assertion for localhost no longer counts.
      t.factors.policies.set(t.org.id, {
        ...base,
        webauthn: { rpId: 'example.com', rpName: 'Acme', origins: [t.otherOrigin] },
      });
      const answer = await tab.api('/authenticate/webauthn', {
        challenge_id: options.json.result.challenge_id,
        response,
      });
      await expectStatus(answer, 401);
      const failed = await t.eventsNamed('AuthenticationFailed_v1');
      expect(failed.at(-1)?.failure_detail).toMatch(/RP ID/i);
    } finally {
      t.factors.policies.delete(t.org.id);
      await tab.close();
    }
  });

  it('refuses passkey sign-in when the policy leaves webauthn out of the first factors', async () => {
    t.factors.policies.set(t.org.id, { ...t.factors.policyOf(t.org.id), firstFactors: ['password'] });
    try {
      const res = await t.call('POST', '/authenticate/webauthn/options', { key: null, body: {} });
      await expectStatus(res, 403);
      expect(res.json.errors[0].message).toContain('webauthn');
    } finally {
      t.factors.policies.delete(t.org.id);
    }
  });

  it('completes a second step with a passkey of the person, once', async () => {
    const person = await t.person();
    const stranger = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      t.factors.secondStep.set(person.personId, ['webauthn']);
      // A passkey sign-in whose policy asks for a second step answers it rather than a token.
      const first = await pageSignIn(tab);
      await expectStatus(first.answer, 200);
      expect(first.answer.json.result).toMatchObject({ person_id: person.personId, mfa_required: true });
      expect(first.answer.json.result.token).toBeUndefined();
      const mfaToken: string = first.answer.json.result.mfa_token;

      const options = async () => {
        const opts = await tab.api('/authenticate/mfa/webauthn-options', { mfa_token: mfaToken });
        await expectStatus(opts, 200);
        expect(opts.json.result.options.allowCredentials).toHaveLength(1);
        expect(opts.json.result.options.userVerification).toBe('discouraged');
        const response = await tab.get(opts.json.result.options);
        return { challenge_id: opts.json.result.challenge_id, response };
      };

      // Another person's second step, who has a passkey too, cannot be completed with this one's.
      const strangerTab = await openPasskeyPage(browser, t);
      await registerPasskey(t, strangerTab, stranger.personId);
      await strangerTab.close();
      const [wrong] = await t.service.ctx.hooks.run(checkSecondFactor, {
        orgId: t.org.id,
        personId: stranger.personId,
        method: 'webauthn',
        input: await options(),
        rc,
      });
      expect(wrong).toMatchObject({ ok: false, reason: 'invalid' });
      expect(wrong?.ok === false && wrong.detail).toMatch(/^wrong_person/);

      const input = await options();
      const [done] = await t.service.ctx.hooks.run(checkSecondFactor, {
        orgId: t.org.id,
        personId: person.personId,
        method: 'webauthn',
        input,
        rc,
      });
      expect(done).toMatchObject({ ok: true, authentication: { method: 'webauthn' } });
      const [again] = await t.service.ctx.hooks.run(checkSecondFactor, {
        orgId: t.org.id,
        personId: person.personId,
        method: 'webauthn',
        input,
        rc,
      });
      expect(again).toMatchObject({ ok: false, reason: 'invalid' });
    } finally {
      t.factors.secondStep.delete(person.personId);
      await tab.close();
    }
  });

  it('refuses second-step options for an mfa_token that names no pending step', async () => {
    const unknown = await t.call('POST', '/authenticate/mfa/webauthn-options', {
      key: null,
      body: { mfa_token: 'not-a-token' },
    });
    await expectStatus(unknown, 401);
    expect(unknown.json.errors[0].message).toContain('mfa_token');
  });
});
