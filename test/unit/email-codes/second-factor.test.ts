import { afterEach, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions, CallResult } from '../../helpers/service.ts';
import { type EmailTestService, emailService } from './fixture.ts';

let svc: EmailTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const POLICY = {
  first_factors: ['email_link', 'otp_via_email'],
  second_factor: 'required',
  second_factors: ['otp_via_email'],
};

const page = (t: EmailTestService, token: string) =>
  t.call('GET', `/email/sign-in?token=${token}`, { key: null, orgId: null });

/** Signs in with the `n`-th message's link (asked for just before): the first factor's answer. */
async function firstFactorByLink(t: EmailTestService, email: string, n: number, o: CallOptions = {}) {
  const started = await t.start(email, 'email_link', '203.0.113.7', o);
  await expectStatus(started, 202);
  const { token } = await t.link(n);
  const opened = await page(t, token);
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(opened.text)![1]!;
  const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
  await expectStatus(
    await t.call('POST', '/email/sign-in', {
      key: null,
      orgId: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      raw: new URLSearchParams({ csrf_token: csrf, token }).toString(),
    }),
    200,
  );
  const done = await t.verify({ challenge_id: started.json.result.challenge_id }, '203.0.113.7', o);
  await expectStatus(done, 200);
  return done.json.result as { person_id: string; mfa_required?: true; mfa_token: string; methods: string[] };
}

const sendCode = (t: EmailTestService, mfa_token: string, o: CallOptions = {}): Promise<CallResult> =>
  t.call('POST', '/authenticate/mfa/email', { key: null, ...o, body: { mfa_token } });
const mfa = (t: EmailTestService, body: unknown, o: CallOptions = {}) =>
  t.call('POST', '/authenticate/mfa', { key: null, ...o, body });

describe('a code by email as the second factor', () => {
  it('sends a code for an mfa_token, and the code completes the sign-in with both factors', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    await expectStatus(await svc.call('PUT', '/organizations/authentication-policy', { body: POLICY }), 200);
    const first = await firstFactorByLink(svc, 'ada@example.com', 1);
    expect(first).toMatchObject({ person_id: personId, mfa_required: true, methods: ['otp_via_email'] });

    const sent = await sendCode(svc, first.mfa_token);
    await expectStatus(sent, 202);
    const { challenge_id } = sent.json.result;
    const code = await svc.code(2);
    expect((await svc.mail(2)).envelopeTo).toEqual(['ada@example.com']);

    const done = await mfa(svc, { mfa_token: first.mfa_token, method: 'otp_via_email', challenge_id, code });
    await expectStatus(done, 200);
    expect(decodeJwt(done.json.result.token)).toMatchObject({
      person_id: personId,
      authenticated_methods: ['email_link', 'otp_via_email'],
    });
    const [succeeded] = await svc.named('AuthenticationSucceeded_v1', 1);
    expect(succeeded).toMatchObject({
      success_authn_method: 'otp_via_email',
      authenticated_methods: ['email_link', 'otp_via_email'],
    });
  });

  it('keeps first-factor and second-factor challenges apart', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    await expectStatus(await svc.call('PUT', '/organizations/authentication-policy', { body: POLICY }), 200);
    const first = await firstFactorByLink(svc, 'ada@example.com', 1);
    const sent = await sendCode(svc, first.mfa_token);
    const code = await svc.code(2);
    // The second-factor code is no first factor.
    const asFirst = await svc.verify({ challenge_id: sent.json.result.challenge_id, code });
    await expectStatus(asFirst, 401);
    // A first-factor code is no second factor.
    const started = await svc.start('ada@example.com', 'otp_via_email');
    const firstCode = await svc.code(3);
    const asSecond = await mfa(svc, {
      mfa_token: first.mfa_token,
      method: 'otp_via_email',
      challenge_id: started.json.result.challenge_id,
      code: firstCode,
    });
    await expectStatus(asSecond, 401);
    expect(asSecond.json.errors[0].message).toContain('no second-factor code was sent');
  });

  it("refuses one person's code for another person's sign-in, and another organization's mfa_token", async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    await svc.addPerson('bob@example.com');
    await expectStatus(await svc.call('PUT', '/organizations/authentication-policy', { body: POLICY }), 200);
    const ada = await firstFactorByLink(svc, 'ada@example.com', 1);
    const bob = await firstFactorByLink(svc, 'bob@example.com', 2);
    const sent = await sendCode(svc, bob.mfa_token);
    const bobsCode = await svc.code(3);
    const crossed = await mfa(svc, {
      mfa_token: ada.mfa_token,
      method: 'otp_via_email',
      challenge_id: sent.json.result.challenge_id,
      code: bobsCode,
    });
    await expectStatus(crossed, 401);

    const hostile = await svc.service.ctx.orgs.create('Hostile');
    const there = await sendCode(svc, ada.mfa_token, { orgId: hostile.organization.id });
    await expectStatus(there, 401);
    expect(there.json.errors[0].message).toContain('mfa_token');
    await expectStatus(await sendCode(svc, 'not-a-token'), 401);
  });
});
