import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { personCredentials } from '../../../core/factors/credentials.ts';
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
      const listed = await t.service.ctx.hooks.run(personCredentials, {
        orgId: t.org.id,
        personId: person.personId,
      });
      const mine = listed.flat().find((c) => c.credentialId === made.credential_id);
      expect(mine).toMatchObject({ type: 'webauthn', name: 'Laptop', firstFactor: true, secondFactor: true });
      expect(mine?.lastUsedAt).toBeNumber();
      expect((await tab.credentials())[0]?.signCount).toBe(2);
    } finally {
      await tab.close();
    }
  });

  it('refuses a replayed answer, and an old assertion sent with a fresh challenge', async () => {
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      const first = await pageSignIn(tab);
      await expectStatus(first.answer, 200);
      const replay = await tab.api('/authenticate/webauthn', {
        challenge_id: first.options.json.result.challenge_id,
        response: first.response,
      });
      await expectStatus(replay, 400);
      expect(replay.json.errors[0].message).toContain('challenge_id:');

      const fresh = await tab.api('/authenticate/webauthn/options', {});
      await expectStatus(fresh, 200);
      const stale = await tab.api('/authenticate/webauthn', {
        challenge_id: fresh.json.result.challenge_id,
        response: first.response,
      });
      await expectStatus(stale, 401);
      const failed = await t.eventsNamed('AuthenticationFailed_v1', 2);
      expect(failed.map((e) => e.failure_reason)).toEqual(
        expect.arrayContaining(['challenge_refused', 'invalid_assertion']),
      );
      expect(failed.every((e) => e.failed_authn_method === 'webauthn')).toBe(true);
    } finally {
      await tab.close();
    }
  });

  it('refuses a registration and an assertion made on an origin the policy does not list', async () => {
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      await tab.goto(t.otherOrigin);
      // The same relying party (localhost), another origin: the browser signs, the service refuses.
      const { answer } = await pageSignIn(tab);
      await expectStatus(answer, 401);

      // A second person's registration on that origin: refused, nothing stored.
      const other = await t.person();
      const opts = await t.call(
        'POST',
        `/persons/${other.personId}/credentials/webauthn/registration-options`,
      );
      await expectStatus(opts, 200);
      const response = await tab.create(opts.json.result.options);
      const refused = await t.call('POST', `/persons/${other.personId}/credentials/webauthn`, {
        body: { challenge_id: opts.json.result.challenge_id, response },
      });
      await expectStatus(refused, 400);
      expect(refused.json.errors[0].message).toMatch(/^response: .*origin/i);
      expect(await tab.credentials()).toHaveLength(2);
      const listed = await t.service.ctx.hooks.run(personCredentials, {
        orgId: t.org.id,
        personId: other.personId,
      });
      expect(listed.flat().filter((c) => c.type === 'webauthn')).toEqual([]);
    } finally {
      await tab.close();
    }
  });

  it('binds a sign-in to the person a handle names, answering alike for an unknown handle', async () => {
    const ada = await t.person();
    const bob = await t.person();
    const adaTab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, adaTab, ada.personId);
      const forBob = await adaTab.api('/authenticate/webauthn/options', { handle: bob.handle });
      const forNobody = await adaTab.api('/authenticate/webauthn/options', {
        handle: { type: 'username', value: 'nobody-here' },
      });
      await expectStatus(forBob, 200);
      await expectStatus(forNobody, 200);
      const shape = (o: Record<string, unknown>) => Object.keys(o).sort();
      expect(shape(forBob.json.result.options)).toEqual(shape(forNobody.json.result.options));
      const response = await adaTab.get(forBob.json.result.options);
      const answer = await adaTab.api('/authenticate/webauthn', {
        challenge_id: forBob.json.result.challenge_id,
        response,
      });
      await expectStatus(answer, 401);
      // Her own handle: her passkey signs her in.
      const own = await pageSignIn(adaTab, { handle: ada.handle });
      await expectStatus(own.answer, 200);
      expect(own.answer.json.result.person_id).toBe(ada.personId);
    } finally {
      await adaTab.close();
    }
  });

  it('keeps another organization out: its key, its challenges and its sign-in refuse this one’s passkeys', async () => {
    const person = await t.person();
    const hostile = await t.service.ctx.orgs.create('Hostile');
    const tab = await openPasskeyPage(browser, t);
    try {
      await registerPasskey(t, tab, person.personId);
      // Its API key, on its own organization, does not find the person; on ours, it is refused.
      const path = `/persons/${person.personId}/credentials/webauthn/registration-options`;
      await expectStatus(
        await t.call('POST', path, { orgId: hostile.organization.id, key: hostile.apiKey }),
        404,
      );
      await expectStatus(await t.call('POST', path, { key: hostile.apiKey }), 403);

      // Our person's passkey, asked for by the other organization's sign-in: no such passkey there.
      const theirs = await tab.api('/authenticate/webauthn/options', {}, hostile.organization.id);
      await expectStatus(theirs, 200);
      const response = await tab.get(theirs.json.result.options);
      const answer = await tab.api(
        '/authenticate/webauthn',
        { challenge_id: theirs.json.result.challenge_id, response },
        hostile.organization.id,
      );
      await expectStatus(answer, 401);

      // Our challenge answered under the other organization's OrgID: it has no such challenge.
      const ours = await tab.api('/authenticate/webauthn/options', {});
      const ourResponse = await tab.get(ours.json.result.options);
      const crossed = await tab.api(
        '/authenticate/webauthn',
        { challenge_id: ours.json.result.challenge_id, response: ourResponse },
        hostile.organization.id,
      );
      await expectStatus(crossed, 400);
      // Still open for us: a refusal elsewhere did not use it up.
      const mine = await tab.api('/authenticate/webauthn', {
        challenge_id: ours.json.result.challenge_id,
        response: ourResponse,
      });
      await expectStatus(mine, 200);
    } finally {
      await tab.close();
    }
  });

  it('signs nobody in with a deleted passkey, nor with the passkey of a deleted person', async () => {
    const person = await t.person();
    const tab = await openPasskeyPage(browser, t);
    try {
      const laptop = await registerPasskey(t, tab, person.personId, 'Laptop');
      await expectStatus((await pageSignIn(tab)).answer, 200);
      // The credentials API (the factors plugin) lists it with its name and last use, and deletes it.
      const listed = await t.call('GET', `/persons/${person.personId}/credentials`);
      await expectStatus(listed, 200);
      const entry = JSON.stringify(listed.json.result);
      expect(listed.json.result).toContainEqual(
        expect.objectContaining({ credential_id: laptop.credential_id, type: 'webauthn', name: 'Laptop' }),
      );
      expect(entry).toContain('last_used_at');
      await expectStatus(
        await t.call('DELETE', `/persons/${person.personId}/credentials/${laptop.credential_id}`),
        204,
      );
      await expectStatus((await pageSignIn(tab)).answer, 401);

      // The authenticator still holds the first one; a second passkey, then the person deleted.
      const other = await t.person();
      const otherTab = await openPasskeyPage(browser, t);
      try {
        await registerPasskey(t, otherTab, other.personId);
        await expectStatus((await pageSignIn(otherTab)).answer, 200);
        await expectStatus(await t.call('DELETE', `/persons/${other.personId}`), 204);
        await expectStatus((await pageSignIn(otherTab)).answer, 401);
        const left = await t.service.ctx.hooks.run(personCredentials, {
          orgId: t.org.id,
          personId: other.personId,
        });
        expect(left.flat()).toEqual([]);
      } finally {
        await otherTab.close();
      }
    } finally {
      await tab.close();
    }
  });
});
