import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { FIRST_FACTORS } from '../../../core/factors/policy.ts';
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
 * Passkeys under an organization's policy (the factors plugin), in Chromium with a virtual
 * authenticator: the relying party and origins read from the policy at each ceremony, a first factor
 * the policy leaves out, and the passkey as the second step of a password sign-in (POST
 * /authenticate/mfa/webauthn-options, then POST /authenticate/mfa).
 */
const present = chromiumPresent('the passkeys policy browser test');

let t: PasskeyService;
let browser: Browser;
const OFF = { first_factors: [...FIRST_FACTORS], second_factor: 'off' };

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

const rc: RequestContext = {
  clientIp: '127.0.0.1',
  analytics: { clientIpAddress: '127.0.0.1' },
  browser: { user_agent: '', window_location: '', service_sdk_version: '' },
};

describe.skipIf(!present)('passkeys under an organization policy', () => {
  it('takes the relying party and origins from the policy, and refuses an assertion for another RP', async () => {
    // a.localhost: a name under localhost, so the policy can move the RP between the two with one origin.
    const origin = t.origin.replace('//localhost', '//a.localhost');
    await t.setPolicy({
      ...OFF,
      webauthn: { rp_id: 'a.localhost', rp_name: 'Acme passkeys', origins: [origin] },
    });
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t, origin);
    try {
      const opts = await t.call(
        'POST',
        `/persons/${person.personId}/credentials/webauthn/registration-options`,
      );
      await expectStatus(opts, 200);
      expect(opts.json.result.options.rp).toEqual({ name: 'Acme passkeys', id: 'a.localhost' });
      await registerPasskey(t, tab, person.personId);
      await expectStatus((await pageSignIn(tab)).answer, 200);

      const options = await tab.api('/authenticate/webauthn/options', {});
      const response = await tab.get(options.json.result.options);
      // The policy moves the relying party before the answer arrives: an assertion for a.localhost no longer counts.
      await t.setPolicy({ ...OFF, webauthn: { rp_id: 'localhost', rp_name: 'Acme', origins: [origin] } });
      const answer = await tab.api('/authenticate/webauthn', {
        challenge_id: options.json.result.challenge_id,
        response,
      });
      await expectStatus(answer, 401);
      const failed = await t.eventsNamed('AuthenticationFailed_v1');
      expect(failed.at(-1)).toMatchObject({ failure_reason: 'invalid_assertion' });
      expect(failed.at(-1)?.failure_detail).toMatch(/RP ID/i);
    } finally {
      await t.setPolicy(OFF);
      await tab.close();
    }
  });

  it('refuses passkey sign-in when the policy leaves webauthn out of the first factors', async () => {
    await t.setPolicy({ first_factors: ['password'], second_factor: 'off' });
    try {
      const res = await t.call('POST', '/authenticate/webauthn/options', { key: null, body: {} });
      await expectStatus(res, 403);
      expect(res.json.errors[0].message).toContain('webauthn');
    } finally {
      await t.setPolicy(OFF);
    }
  });

  it('completes a password sign-in with the passkey as the second step, once', async () => {
    await t.setPolicy({ ...OFF, second_factor: 'optional', second_factors: ['webauthn'] });
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      const first = await t.call('POST', '/authenticate/password', {
        key: null,
        body: { handle: person.handle, password: person.password },
      });
      await expectStatus(first, 200);
      expect(first.json.result).toMatchObject({ mfa_required: true, methods: ['webauthn'] });
      const mfaToken: string = first.json.result.mfa_token;

      const opts = await tab.api('/authenticate/mfa/webauthn-options', { mfa_token: mfaToken });
      await expectStatus(opts, 200);
      expect(opts.json.result.options.allowCredentials).toHaveLength(1);
      expect(opts.json.result.options.userVerification).toBe('discouraged');
      const response = await tab.get(opts.json.result.options);
      const body = {
        mfa_token: mfaToken,
        method: 'webauthn',
        challenge_id: opts.json.result.challenge_id,
        response,
      };
      const done = await tab.api('/authenticate/mfa', body);
      await expectStatus(done, 200);
      expect(decodeJwt(done.json.result.token).authenticated_methods).toEqual(['password', 'webauthn']);
      await expectStatus(await tab.api('/authenticate/mfa', body), 401);

      // A passkey sign-in under the same policy asks no second step of the passkey itself.
      const own = await pageSignIn(tab);
      await expectStatus(own.answer, 200);
      expect(decodeJwt(own.answer.json.result.token).authenticated_methods).toEqual(['webauthn']);
    } finally {
      await t.setPolicy(OFF);
      await tab.close();
    }
  });

  it("refuses one person's passkey in another person's second step", async () => {
    await t.setPolicy({ ...OFF, second_factor: 'optional', second_factors: ['webauthn'] });
    const person = await t.person();
    const stranger = await t.person();
    const tab = await openPasskeyPage(browser, t);
    const strangerTab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      await registerPasskey(t, strangerTab, stranger.personId);
      const first = await t.call('POST', '/authenticate/password', {
        key: null,
        body: { handle: person.handle, password: person.password },
      });
      const opts = await tab.api('/authenticate/mfa/webauthn-options', {
        mfa_token: first.json.result.mfa_token,
      });
      await expectStatus(opts, 200);
      const response = await tab.get(opts.json.result.options);
      const [wrong] = await t.service.ctx.hooks.run(checkSecondFactor, {
        orgId: t.org.id,
        personId: stranger.personId,
        method: 'webauthn',
        input: { challenge_id: opts.json.result.challenge_id, response },
        rc,
      });
      expect(wrong).toMatchObject({ ok: false, reason: 'invalid' });
      expect(wrong?.ok === false && wrong.detail).toMatch(/^wrong_person/);
    } finally {
      await t.setPolicy(OFF);
      await tab.close();
      await strangerTab.close();
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
