import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { deletePersonCredential } from '../../../core/factors/credentials.ts';
import { checkSecondFactor } from '../../../core/factors/second-factor.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type PasskeyService, startPasskeyService } from './fixture.ts';

/**
 * What the passkey routes refuse before any authenticator is involved: malformed bodies (400 naming
 * the field), unknown persons, challenges that are unknown, another person's or expired, and attempts
 * past the per-address limit. The ceremonies themselves are tested in Chromium (browser.test.ts).
 */
const clock = manualClock();
let t: PasskeyService;

beforeAll(async () => {
  t = await startPasskeyService({ clock, env: { PASSKEY_ADDRESS_RATE_LIMIT: '1/3' } });
});
afterAll(() => t.stop());

/** A well-formed registration answer that no authenticator made. */
const forgedRegistration = {
  id: 'AAAA',
  rawId: 'AAAA',
  type: 'public-key',
  response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' },
  clientExtensionResults: {},
};
const forgedAssertion = {
  id: 'AAAA',
  rawId: 'AAAA',
  type: 'public-key',
  response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA' },
  clientExtensionResults: {},
};

const optionsFor = async (personId: string) => {
  const res = await t.call('POST', `/persons/${personId}/credentials/webauthn/registration-options`);
  await expectStatus(res, 200);
  return res.json.result as { challenge_id: string; options: Record<string, unknown> };
};

describe('passkey registration refusals', () => {
  it('answers options for the person, bound to the relying party of PUBLIC_BASE_URL', async () => {
    const person = await t.person();
    const { options } = await optionsFor(person.personId);
    expect(options).toMatchObject({
      rp: { id: 'localhost' },
      user: { name: person.handle.value },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    // EdDSA, ES256, RS256: what every runtime the service runs on verifies.
    expect((options.pubKeyCredParams as Array<{ alg: number }>).map((p) => p.alg)).toEqual([-8, -7, -257]);
  });

  it('is a 404 for a person of no organization of the caller', async () => {
    const res = await t.call('POST', '/persons/no-such-person/credentials/webauthn/registration-options');
    await expectStatus(res, 404);
  });

  it('names the field and the rule of a malformed registration', async () => {
    const person = await t.person();
    const path = `/persons/${person.personId}/credentials/webauthn`;
    const cases: Array<[unknown, string]> = [
      [{ response: forgedRegistration }, 'body.challenge_id: is required'],
      [{ challenge_id: 'x', response: forgedRegistration }, 'body.challenge_id: must be a challenge_id'],
      [
        { challenge_id: crypto.randomUUID(), response: { ...forgedRegistration, type: 'other' } },
        "body.response.type: must be 'public-key'",
      ],
      [
        { challenge_id: crypto.randomUUID(), response: { ...forgedRegistration, id: 'a+b/' } },
        'body.response.id: must be base64url',
      ],
      [
        { challenge_id: crypto.randomUUID(), response: forgedRegistration, name: 'n'.repeat(65) },
        'body.name: must be at most 64 characters',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await t.call('POST', path, { body });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
  });

  it("refuses an unknown challenge, another person's, and one past its time", async () => {
    const ada = await t.person();
    const bob = await t.person();
    const register = (personId: string, challengeId: string) =>
      t.call('POST', `/persons/${personId}/credentials/webauthn`, {
        body: { challenge_id: challengeId, response: forgedRegistration },
      });

    const unknown = await register(ada.personId, crypto.randomUUID());
    await expectStatus(unknown, 400);
    expect(unknown.json.errors[0].message).toStartWith('challenge_id: names no open registration challenge');

    const adas = await optionsFor(ada.personId);
    const crossed = await register(bob.personId, adas.challenge_id);
    await expectStatus(crossed, 400);
    expect(crossed.json.errors[0].message).toContain('made for another person');

    const late = await optionsFor(ada.personId);
    clock.advance(301_000);
    const expired = await register(ada.personId, late.challenge_id);
    await expectStatus(expired, 400);
    expect(expired.json.errors[0].message).toContain('expired');

    // A fresh one reaches the verification, which refuses a response no authenticator made.
    const fresh = await optionsFor(ada.personId);
    const forged = await register(ada.personId, fresh.challenge_id);
    await expectStatus(forged, 400);
    expect(forged.json.errors[0].message).toStartWith('response: ');
  });
});

describe('passkey sign-in refusals', () => {
  it('names the field of a malformed sign-in and refuses a forged one', async () => {
    const badHandle = await t.call('POST', '/authenticate/webauthn/options', {
      key: null,
      body: { handle: { type: 'nickname', value: 'x' } },
      peer: '192.0.2.1',
    });
    await expectStatus(badHandle, 400);
    expect(badHandle.json.errors[0].message).toContain('body.handle.type: must be one of');

    const missing = await t.call('POST', '/authenticate/webauthn', {
      key: null,
      body: {},
      peer: '192.0.2.1',
    });
    await expectStatus(missing, 400);
    expect(missing.json.errors[0].message).toContain('body.challenge_id: is required');

    const options = await t.call('POST', '/authenticate/webauthn/options', { key: null, peer: '192.0.2.2' });
    await expectStatus(options, 200);
    const forged = await t.call('POST', '/authenticate/webauthn', {
      key: null,
      peer: '192.0.2.2',
      body: { challenge_id: options.json.result.challenge_id, response: forgedAssertion },
    });
    await expectStatus(forged, 401);
    const failed = await t.eventsNamed('AuthenticationFailed_v1');
    expect(failed.at(-1)).toMatchObject({
      failed_authn_method: 'webauthn',
      failure_reason: 'unknown_credential',
    });
  });

  it('answers 429 with Retry-After past the per-address limit', async () => {
    const ask = () => t.call('POST', '/authenticate/webauthn/options', { key: null, peer: '198.51.100.7' });
    for (let i = 0; i < 3; i++) await expectStatus(await ask(), 200);
    const limited = await ask();
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not held back.
    await expectStatus(
      await t.call('POST', '/authenticate/webauthn/options', { key: null, peer: '198.51.100.8' }),
      200,
    );
  });
});

describe('the passkey hooks', () => {
  it('refuses a malformed second-step input with a 400 naming the field', async () => {
    const person = await t.person();
    const run = t.service.ctx.hooks.run(checkSecondFactor, {
      orgId: t.org.id,
      personId: person.personId,
      method: 'webauthn',
      input: { challenge_id: 'nope' },
      rc: {
        clientIp: undefined,
        analytics: {},
        browser: { user_agent: '', window_location: '', service_sdk_version: '' },
      },
    });
    await expect(run).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('body.challenge_id'),
    });
  });

  it("deletes nothing for another factor's credential ID", async () => {
    const person = await t.person();
    const deleted = await t.service.ctx.storage.transaction((tx) =>
      t.service.ctx.hooks.run(deletePersonCredential, {
        orgId: t.org.id,
        personId: person.personId,
        credentialId: 'password',
        tx,
      }),
    );
    // The password plugin deletes its own; passkeys are not asked to parse it as one of theirs.
    expect(deleted.filter((d) => d?.type === 'webauthn')).toEqual([]);
  });
});
