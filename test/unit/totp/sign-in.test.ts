import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type TotpTestService, totpCode, totpService } from './fixture.ts';

// The whole sign-in through the factors plugin: the password first (POST /authenticate/password answers
// the second step under a policy that requires one), then POST /authenticate/mfa with method totp.

const PASSWORD = 'correct horse battery staple';

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

/** Sets the person's password; answers the handle it signs in with. */
async function withPassword(personId: string) {
  const person = await t.call('GET', `/persons/${personId}`);
  await expectStatus(person, 200);
  const set = await t.call('PUT', `/persons/${personId}/credentials/password`, {
    body: { password: PASSWORD },
  });
  await expectStatus(set, 204);
  return person.json.result.handles[0] as { type: string; value: string };
}

const signIn = (handle: { type: string; value: string }) =>
  t.call('POST', '/authenticate/password', {
    key: null,
    body: { handle, password: PASSWORD },
    headers: { 'x-forwarded-for': '198.51.100.7' },
  });

/** A person with a password and a confirmed authenticator, and a way to start their sign-ins. */
async function enrolledPerson() {
  const personId = await t.addPerson();
  const handle = await withPassword(personId);
  const enrolment = await t.enrolled(personId);
  /** The password's answer: the mfa_token of the second step. */
  async function mfaToken(): Promise<string> {
    const res = await signIn(handle);
    await expectStatus(res, 200);
    expect(res.json.result).toEqual({
      person_id: personId,
      mfa_required: true,
      mfa_token: expect.any(String),
      methods: ['totp'],
    });
    return res.json.result.mfa_token;
  }
  return { personId, handle, mfaToken, ...enrolment };
}

const mfa = (body: unknown) => t.call('POST', '/authenticate/mfa', { key: null, body });

describe('a sign-in completed with TOTP', () => {
  it('issues the token with both factors for the code of the app', async () => {
    const p = await enrolledPerson();
    const token = await p.mfaToken();
    const res = await mfa({ mfa_token: token, method: 'totp', code: totpCode(p.secret, t.clock.now()) });
    await expectStatus(res, 200);
    expect(res.json.result.person_id).toBe(p.personId);
    expect(decodeJwt(res.json.result.token).authenticated_methods).toEqual(['password', 'totp']);
    const succeeded = (await t.eventsNamed('AuthenticationSucceeded_v1')).find(
      (e) => (e as { person_id?: string }).person_id === p.personId,
    );
    expect(succeeded).toMatchObject({
      success_authn_method: 'totp',
      authenticated_methods: ['password', 'totp'],
    });
  });

  it('refuses a wrong or replayed code with 401 and AuthenticationFailed_v1 naming totp', async () => {
    const p = await enrolledPerson();
    const code = totpCode(p.secret, t.clock.now());
    await expectStatus(await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code }), 200);
    const replayed = await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code });
    await expectStatus(replayed, 401);
    expect(replayed.json.errors[0].message).toContain('was used already');
    const failed = (await t.eventsNamed('AuthenticationFailed_v1')).find(
      (e) => (e as { person_id?: string }).person_id === p.personId,
    );
    expect(failed).toMatchObject({ failed_authn_method: 'totp', failure_reason: 'invalid' });
  });

  it('takes a recovery code in place of the code, once', async () => {
    const p = await enrolledPerson();
    const code = p.recoveryCodes[3];
    const res = await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code });
    await expectStatus(res, 200);
    expect(decodeJwt(res.json.result.token).authenticated_methods).toEqual(['password', 'totp']);
    await expectStatus(await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code }), 401);
  });

  it('answers 429 with Retry-After past the attempts of the person', async () => {
    const p = await enrolledPerson();
    const wrong = totpCode(p.secret, t.clock.now() + 10 * 60_000);
    // Three at once: the confirmation took one, and two wrong codes the rest.
    for (let i = 0; i < 2; i++)
      await expectStatus(await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code: wrong }), 401);
    const code = totpCode(p.secret, t.clock.now());
    const limited = await mfa({ mfa_token: await p.mfaToken(), method: 'totp', code });
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('lists the authenticator among the credentials, and deleting it ends the second step', async () => {
    const p = await enrolledPerson();
    const path = `/persons/${p.personId}/credentials`;
    const listed = await t.call('GET', path);
    await expectStatus(listed, 200);
    expect(listed.json.result).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ credential_id: p.credentialId, type: 'totp', name: 'Phone' }),
      ]),
    );
    // Another organization cannot delete it.
    await expectStatus(await t.call('DELETE', `${path}/${p.credentialId}`, t.asOther), 404);
    await expectStatus(await t.call('DELETE', `${path}/${p.credentialId}`), 204);
    const left = (await t.call('GET', path)).json.result as Array<{ type: string }>;
    expect(left.map((c) => c.type)).toEqual(['password']);
    // Required, and none enrolled: the password alone signs nobody in.
    const res = await signIn(p.handle);
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain('requires a second factor (one of totp)');
  });
});
