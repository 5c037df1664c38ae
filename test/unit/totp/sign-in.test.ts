import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { contextFrom, type TotpTestService, totpCode, totpService } from './fixture.ts';

// The whole sign-in through the factors plugin: a first factor (the password, through the
// signInCompletion capability every first factor ends in), then POST /authenticate/mfa with method totp.

let t: TotpTestService;
beforeAll(async () => {
  t = await totpService({ totp: { personRateLimit: { perMinute: 1, burst: 3 } } });
  await expectStatus(
    await t.call('PUT', '/organizations/authentication-policy', {
      body: { first_factors: ['password'], second_factor: 'required', second_factors: ['totp'] },
    }),
    200,
  );
});
afterAll(() => t.stop());

/** A first factor's success for the person: the mfa_token of the second step, or the token. */
async function afterPassword(personId: string) {
  const completion = t.service.ctx.capability(signInCompletion);
  const person = await t.service.ctx.capability(personDirectory)?.get(t.org.id, personId);
  if (!completion || !person) throw new Error('no signInCompletion (factors plugin), or no such person');
  const handle = person.handles[0]!;
  return completion.afterFirstFactor({
    orgId: t.org.id,
    person,
    authentication: {
      handle: { type: handle.type, value: handle.value },
      method: 'password',
      timestamp: new Date(t.clock.now()).toISOString(),
    },
    rc: contextFrom('198.51.100.7'),
  });
}

async function mfaToken(personId: string): Promise<string> {
  const started = await afterPassword(personId);
  if (started.kind !== 'mfa_required') throw new Error(`expected the second step, got ${started.kind}`);
  expect(started.methods).toEqual(['totp']);
  return started.mfa_token;
}

const mfa = (body: unknown) => t.call('POST', '/authenticate/mfa', { key: null, body });

describe('a sign-in completed with TOTP', () => {
  it('issues the token with both factors for the code of the app', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const token = await mfaToken(personId);
    const res = await mfa({ mfa_token: token, method: 'totp', code: totpCode(secret, t.clock.now()) });
    await expectStatus(res, 200);
    expect(res.json.result.person_id).toBe(personId);
    expect(decodeJwt(res.json.result.token).authenticated_methods).toEqual(['password', 'totp']);
    const succeeded = (await t.eventsNamed('AuthenticationSucceeded_v1')).find(
      (e) => (e as { person_id?: string }).person_id === personId,
    );
    expect(succeeded).toMatchObject({
      success_authn_method: 'totp',
      authenticated_methods: ['password', 'totp'],
    });
  });

  it('refuses a wrong or replayed code with 401 and AuthenticationFailed_v1 naming totp', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const code = totpCode(secret, t.clock.now());
    await expectStatus(await mfa({ mfa_token: await mfaToken(personId), method: 'totp', code }), 200);
    const replayed = await mfa({ mfa_token: await mfaToken(personId), method: 'totp', code });
    await expectStatus(replayed, 401);
    expect(replayed.json.errors[0].message).toContain('was used already');
    const failed = (await t.eventsNamed('AuthenticationFailed_v1')).find(
      (e) => (e as { person_id?: string }).person_id === personId,
    );
    expect(failed).toMatchObject({ failed_authn_method: 'totp', failure_reason: 'invalid' });
  });

  it('takes a recovery code in place of the code, once', async () => {
    const personId = await t.addPerson();
    const { recoveryCodes } = await t.enrolled(personId);
    const code = recoveryCodes[3];
    const res = await mfa({ mfa_token: await mfaToken(personId), method: 'totp', code });
    await expectStatus(res, 200);
    expect(decodeJwt(res.json.result.token).authenticated_methods).toEqual(['password', 'totp']);
    await expectStatus(await mfa({ mfa_token: await mfaToken(personId), method: 'totp', code }), 401);
  });

  it('answers 429 with Retry-After past the attempts of the person', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const wrong = totpCode(secret, t.clock.now() + 10 * 60_000);
    // Three at once: the confirmation took one, and two wrong codes the rest.
    for (let i = 0; i < 2; i++)
      await expectStatus(
        await mfa({ mfa_token: await mfaToken(personId), method: 'totp', code: wrong }),
        401,
      );
    const limited = await mfa({
      mfa_token: await mfaToken(personId),
      method: 'totp',
      code: totpCode(secret, t.clock.now()),
    });
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('lists the authenticator among the credentials, and deleting it ends the second step', async () => {
    const personId = await t.addPerson();
    const { credentialId } = await t.enrolled(personId);
    const listed = await t.call('GET', `/persons/${personId}/credentials`);
    await expectStatus(listed, 200);
    expect(listed.json.result).toEqual([
      expect.objectContaining({ credential_id: credentialId, type: 'totp' }),
    ]);
    // Another organization cannot delete it.
    await expectStatus(
      await t.call('DELETE', `/persons/${personId}/credentials/${credentialId}`, t.asOther),
      404,
    );
    await expectStatus(await t.call('DELETE', `/persons/${personId}/credentials/${credentialId}`), 204);
    expect((await t.call('GET', `/persons/${personId}/credentials`)).json.result).toEqual([]);
    // Required, and none enrolled: the first factor alone signs nobody in.
    await expect(afterPassword(personId)).rejects.toThrow(/requires a second factor \(one of totp\)/);
  });
});
