import { afterEach, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { passwordAuthenticator } from '../../../core/capabilities/password-authenticator.ts';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { signInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { codeFactor } from './code-factor.ts';
import { type FactorsService, factorsService } from './fixture.ts';

let svc: FactorsService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const ADA = { type: 'email_address' as const, value: 'ada@example.com' };
const REQUIRED = { first_factors: ['password'], second_factor: 'required', second_factors: ['totp'] };
const CODE = '424242';

/** A service with the test code factor, the policy `policy`, and Ada enrolled in it. */
async function setUp(policy: unknown = REQUIRED, env: Record<string, string> = {}) {
  const totp = codeFactor('totp');
  svc = await factorsService({ extra: [totp.plugin], env });
  await svc.setPolicy(policy);
  const ada = await svc.addPerson([ADA]);
  totp.enrol(svc.org.id, ada.personId, CODE);
  return { s: svc, totp, ada };
}

/** Signs Ada in with her password and answers the second step it starts. */
async function firstStep(s: FactorsService, headers: Record<string, string> = {}) {
  const res = await s.signIn(ADA, { headers });
  await expectStatus(res, 200);
  expect(res.json.result.mfa_required).toBe(true);
  return res.json.result.mfa_token as string;
}

describe('the second step of a sign-in', () => {
  it('answers mfa_required without a token, then issues one with both factors and reports it once', async () => {
    const { s, totp, ada } = await setUp();
    const first = await s.signIn(ADA);
    await expectStatus(first, 200);
    expect(first.json.result).toEqual({
      person_id: ada.personId,
      mfa_required: true,
      mfa_token: expect.stringMatching(/^mfa_[A-Za-z0-9_-]{43}$/),
      methods: ['totp'],
    });
    const mfaToken: string = first.json.result.mfa_token;
    // Stored as its digest only.
    const stored = await s.service.ctx.storage.query<{ digest: string }>(
      sql`select digest from factors_mfa_tokens`,
    );
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(mfaToken.slice(4));

    const wrong = await s.mfa({ mfa_token: mfaToken, method: 'totp', code: '000000' });
    await expectStatus(wrong, 401);
    expect(wrong.json.errors[0].message).toContain('the totp code does not match');
    const [failed] = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed).toMatchObject({
      failed_authn_method: 'totp',
      failure_reason: 'invalid',
      person_id: ada.personId,
      authenticated_methods: ['password'],
      handle: { type: 2, value: 'ada@example.com' },
    });

    const done = await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE });
    await expectStatus(done, 200);
    expect(done.json.result.person_id).toBe(ada.personId);
    expect(decodeJwt(done.json.result.token)).toMatchObject({
      person_id: ada.personId,
      authenticated_methods: ['password', 'totp'],
    });
    expect(await s.validate(done.json.result.token)).toMatchObject({ valid: true });
    // The factor's plugin saw its own members only, for Ada of this organization.
    expect(totp.checks.at(-1)).toEqual({ orgId: s.org.id, personId: ada.personId, input: { code: CODE } });

    const succeeded = await s.eventsNamed('AuthenticationSucceeded_v1');
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]).toMatchObject({
      person_id: ada.personId,
      success_authn_method: 'totp',
      authenticated_methods: ['password', 'totp'],
    });
    const minted = await s.eventsNamed('TokenMinted_v1');
    expect(minted).toHaveLength(1);

    // Single use: the same token, even with the right code, signs nobody in again.
    const replay = await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE });
    await expectStatus(replay, 401);
    expect(replay.json.errors[0].message).toContain('unknown, expired or already used');
  });

  it('refuses an expired mfa_token and one presented to another organization', async () => {
    const { s } = await setUp();
    const hostile = await s.otherOrg();
    const stolen = await firstStep(s);
    const elsewhere = await s.mfa(
      { mfa_token: stolen, method: 'totp', code: CODE },
      { orgId: hostile.orgId },
    );
    await expectStatus(elsewhere, 401);
    // Not used up by the other organization's attempt: its own organization still completes it.
    await expectStatus(await s.mfa({ mfa_token: stolen, method: 'totp', code: CODE }), 200);

    const late = await firstStep(s);
    s.clock.advance(299_000);
    const pending = s.service.ctx.capability(signInCompletion);
    expect(await pending?.pending(s.org.id, late)).toBeDefined();
    s.clock.advance(2_000);
    expect(await pending?.pending(s.org.id, late)).toBeUndefined();
    await expectStatus(await s.mfa({ mfa_token: late, method: 'totp', code: CODE }), 401);
    await expectStatus(await s.mfa({ mfa_token: 'mfa_made-up', method: 'totp', code: CODE }), 401);
  });

  it('voids an mfa_token after too many failed checks', async () => {
    const { s } = await setUp(REQUIRED, { MFA_TOKEN_MAX_FAILURES: '3' });
    const mfaToken = await firstStep(s);
    for (let i = 0; i < 3; i++)
      await expectStatus(await s.mfa({ mfa_token: mfaToken, method: 'totp', code: `bad ${i}` }), 401);
    const late = await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE });
    await expectStatus(late, 401);
    expect(late.json.errors[0].message).toContain('unknown, expired or already used');
  });

  it('limits attempts per mfa_token and per address with 429 and Retry-After', async () => {
    const { s } = await setUp(REQUIRED, { MFA_TOKEN_RATE_LIMIT: '1/2', MFA_ADDRESS_RATE_LIMIT: '1/3' });
    const mfaToken = await firstStep(s);
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 2; i++)
      await expectStatus(
        await s.mfa({ mfa_token: mfaToken, method: 'totp', code: 'bad' }, from('203.0.113.1')),
        401,
      );
    const perToken = await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE }, from('203.0.113.2'));
    await expectStatus(perToken, 429);
    expect(Number(perToken.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(perToken.json.errors[0].message).toContain('for this mfa_token');
    const limited = await s.eventsNamed('AuthenticationFailed_v1', 3);
    expect(limited.at(-1)).toMatchObject({
      failed_authn_method: 'totp',
      failure_reason: 'too_many_attempts',
    });

    // Three attempts from one address, then that address waits, whatever token it brings.
    await expectStatus(
      await s.mfa({ mfa_token: 'mfa_x', method: 'totp', code: CODE }, from('203.0.113.1')),
      401,
    );
    const fresh = await firstStep(s);
    const perAddress = await s.mfa({ mfa_token: fresh, method: 'totp', code: CODE }, from('203.0.113.1'));
    await expectStatus(perAddress, 429);
    expect(perAddress.json.errors[0].message).toContain('from this address');
    expect(Number(perAddress.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address completes the same step.
    await expectStatus(
      await s.mfa({ mfa_token: fresh, method: 'totp', code: CODE }, from('198.51.100.7')),
      200,
    );
  });

  it("passes a factor plugin's own limit on as 429 with its Retry-After", async () => {
    const { s } = await setUp();
    const res = await s.mfa({ mfa_token: await firstStep(s), method: 'totp', code: 'slow down' });
    await expectStatus(res, 429);
    expect(res.headers.get('retry-after')).toBe('42');
    const failed = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed.at(-1)).toMatchObject({ failed_authn_method: 'totp', failure_reason: 'rate_limited' });
  });

  it('refuses a method the sign-in does not offer and bodies without their members, naming them', async () => {
    const { s } = await setUp();
    const mfaToken = await firstStep(s);
    const other = await s.mfa({ mfa_token: mfaToken, method: 'webauthn', challenge_id: 'x', response: {} });
    await expectStatus(other, 400);
    expect(other.json.errors[0].message).toBe(
      'body.method: must be one of totp (the second factors this sign-in may be completed with)',
    );
    const unknown = await s.mfa({ mfa_token: mfaToken, method: 'sms', code: CODE });
    await expectStatus(unknown, 400);
    expect(unknown.json.errors[0].message).toContain(
      'body.method: must be one of totp, webauthn, otp_via_email',
    );
    const missing = await s.mfa({ method: 'totp', code: CODE });
    await expectStatus(missing, 400);
    expect(missing.json.errors[0].message).toContain('body.mfa_token: is required');
    // None of those used the step up.
    await expectStatus(await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE }), 200);
  });

  it('asks the second factor under optional only of persons who enrolled one', async () => {
    const { s } = await setUp({ ...REQUIRED, second_factor: 'optional' });
    await firstStep(s);
    const bob = await s.addPerson([{ type: 'username', value: 'bob' }]);
    const res = await s.signIn({ type: 'username', value: 'bob' });
    await expectStatus(res, 200);
    expect(res.json.result.person_id).toBe(bob.personId);
    expect(decodeJwt(res.json.result.token).authenticated_methods).toEqual(['password']);
  });

  it('refuses a person without a second factor under required, and reports it', async () => {
    const { s } = await setUp();
    const bob = await s.addPerson([{ type: 'username', value: 'bob' }]);
    const res = await s.signIn({ type: 'username', value: 'bob' });
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain('requires a second factor (one of totp)');
    const [failed] = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed).toMatchObject({
      failed_authn_method: 'password',
      failure_reason: 'second_factor_not_enrolled',
      person_id: bob.personId,
      authenticated_methods: ['password'],
    });
    expect(await s.eventsNamed('TokenMinted_v1', 0)).toHaveLength(0);
    // The hosted login asks secondStep: never nothing under required, so nobody gets in on one factor.
    const completion = s.service.ctx.capability(signInCompletion);
    expect(await completion?.secondStep(s.org.id, bob.personId)).toEqual(['totp']);
  });

  it('refuses the password when the policy does not allow it, before checking it', async () => {
    const { s } = await setUp({ first_factors: ['webauthn'], second_factor: 'off' });
    const res = await s.signIn(ADA);
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain('does not allow signing in with a password');
    const [failed] = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed).toMatchObject({ failed_authn_method: 'password', failure_reason: 'method_not_allowed' });
    // The hosted login's check is refused by the same policy.
    const check = await s.service.ctx
      .capability(passwordAuthenticator)
      ?.check(s.org.id, { handle: ADA, password: 'correct horse battery staple', request: {} });
    expect(check).toEqual({ ok: false, reason: 'invalid_credentials' });
    // Allowed again, it signs in.
    await s.setPolicy({ first_factors: ['password'], second_factor: 'off' });
    await expectStatus(await s.signIn(ADA), 200);
  });

  it('answers not_enough_factors for a token the current policy would not issue', async () => {
    const { s, ada } = await setUp({ first_factors: ['password'], second_factor: 'off' });
    const passwordOnly = await s.signIn(ADA);
    await expectStatus(passwordOnly, 200);
    const minted = await s.call('POST', `/persons/${ada.personId}/mint-token`, { body: {} });
    await expectStatus(minted, 201);
    await s.setPolicy(REQUIRED);
    expect(await s.validate(passwordOnly.json.result.token)).toEqual({
      valid: false,
      invalidity_reason: 'not_enough_factors',
      invalidity_detail: 'not_enough_factors',
    });
    // The organization's own minted token is not a sign-in the policy judges.
    expect(await s.validate(minted.json.result)).toMatchObject({ valid: true });
    const both = await s.mfa({ mfa_token: await firstStep(s), method: 'totp', code: CODE });
    await expectStatus(both, 200);
    expect(await s.validate(both.json.result.token)).toMatchObject({ valid: true });
    // Back to optional: the password-only token is enough again.
    await s.setPolicy({ ...REQUIRED, second_factor: 'optional' });
    expect(await s.validate(passwordOnly.json.result.token)).toMatchObject({ valid: true });
  });

  it("answers pending() for factor plugins, for the token's organization only", async () => {
    const { s, ada } = await setUp();
    const hostile = await s.otherOrg();
    const mfaToken = await firstStep(s);
    const completion = s.service.ctx.capability(signInCompletion);
    expect(await completion?.pending(s.org.id, mfaToken)).toEqual({
      personId: ada.personId,
      methods: ['totp'],
    });
    expect(await completion?.pending(hostile.orgId, mfaToken)).toBeUndefined();
    await expectStatus(await s.mfa({ mfa_token: mfaToken, method: 'totp', code: CODE }), 200);
    expect(await completion?.pending(s.org.id, mfaToken)).toBeUndefined();
  });

  it('never asks a first factor to complete its own sign-in', async () => {
    const passkeys = codeFactor('webauthn');
    svc = await factorsService({ extra: [passkeys.plugin] });
    const s = svc;
    await s.setPolicy({ first_factors: ['password', 'webauthn'], second_factor: 'optional' });
    const ada = await s.addPerson([ADA]);
    passkeys.enrol(s.org.id, ada.personId, '1', { firstFactor: true });
    const person = await s.service.ctx.capability(personDirectory)?.get(s.org.id, ada.personId);
    const completion = s.service.ctx.capability(signInCompletion);
    if (!person || !completion) throw new Error('the persons and factors plugins are enabled');
    const rc = {
      clientIp: undefined,
      analytics: {},
      browser: { user_agent: '', window_location: '', service_sdk_version: '' },
    };
    const authentication = (method: string) => ({
      handle: ADA,
      method,
      timestamp: new Date(s.clock.now()).toISOString(),
    });
    const byPasskey = await completion.afterFirstFactor({
      orgId: s.org.id,
      person,
      authentication: authentication('webauthn'),
      rc,
    });
    expect(byPasskey.kind).toBe('token');
    if (byPasskey.kind === 'token')
      expect(decodeJwt(byPasskey.token).authenticated_methods).toEqual(['webauthn']);
    // After a password, the passkey is the second step.
    const byPassword = await completion.afterFirstFactor({
      orgId: s.org.id,
      person,
      authentication: authentication('password'),
      rc,
    });
    expect(byPassword).toMatchObject({ kind: 'mfa_required', methods: ['webauthn'] });
    expect(await completion.secondStep(s.org.id, ada.personId)).toEqual(['webauthn']);
  });
});
