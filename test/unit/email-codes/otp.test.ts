import { afterEach, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type EmailTestService, emailService } from './fixture.ts';

let svc: EmailTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const settle = () => new Promise((r) => setTimeout(r, 300));

describe('signing in with a code sent by email (otp_via_email)', () => {
  it('sends a 6-digit code whose challenge signs the person in once', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    const started = await svc.start('Ada@Example.com', 'otp_via_email');
    await expectStatus(started, 202);
    const { challenge_id, expires_at } = started.json.result;
    expect(challenge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    const mail = await svc.mail(1);
    expect(mail.secure).toBe(true);
    expect(mail.envelopeTo).toEqual(['ada@example.com']);
    const code = await svc.code(1);
    expect(mail.parsed.subject).toBe('Your Acme sign-in code');
    expect(mail.parsed.html).toContain(code);

    const verified = await svc.verify({ challenge_id, code });
    await expectStatus(verified, 200);
    expect(verified.json.result.person_id).toBe(personId);
    const claims = decodeJwt(verified.json.result.token);
    expect(claims).toMatchObject({ person_id: personId, authenticated_methods: ['otp_via_email'] });

    const again = await svc.verify({ challenge_id, code });
    await expectStatus(again, 401);
    expect(again.json.errors[0].message).toContain('used already');
    // Following the code proved the address: the person's email is verified now.
    const person = await svc.call('GET', `/persons/${personId}`);
    expect(JSON.stringify(person.json.result)).toContain('"verified":true');
    const succeeded = await svc.named('AuthenticationSucceeded_v1', 1);
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]).toMatchObject({
      person_id: personId,
      success_authn_method: 'otp_via_email',
      authenticated_methods: ['otp_via_email'],
    });
  });

  it('answers an unknown handle with the same 202 and sends nothing; its codes fail like wrong ones', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const unknown = await svc.start('nobody@example.com', 'otp_via_email');
    await expectStatus(unknown, 202);
    expect(Object.keys(unknown.json.result).sort()).toEqual(['challenge_id', 'expires_at']);
    const known = await svc.start('ada@example.com', 'otp_via_email');
    await expectStatus(known, 202);
    await svc.mail(1);
    await settle();
    expect(svc.smtp.received).toHaveLength(1);

    const wrongForUnknown = await svc.verify({
      challenge_id: unknown.json.result.challenge_id,
      code: '123456',
    });
    const code = await svc.code(1);
    const wrong = code === '000000' ? '000001' : '000000';
    const wrongForKnown = await svc.verify({ challenge_id: known.json.result.challenge_id, code: wrong });
    await expectStatus(wrongForUnknown, 401);
    await expectStatus(wrongForKnown, 401);
    expect(wrongForUnknown.json).toEqual(wrongForKnown.json);
  });

  it('voids a challenge after the allowed wrong codes, even for the right code then', async () => {
    svc = await emailService({ options: { maxAttempts: 3 } });
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    const wrong = code === '999999' ? '999998' : '999999';
    await expectStatus(await svc.verify({ challenge_id, code: wrong }), 401);
    await expectStatus(await svc.verify({ challenge_id, code: wrong }), 401);
    const third = await svc.verify({ challenge_id, code: wrong });
    await expectStatus(third, 429);
    expect(third.headers.get('retry-after')).not.toBeNull();
    const right = await svc.verify({ challenge_id, code });
    await expectStatus(right, 429);
    expect(right.json.errors[0].message).toContain('void after 3 wrong codes');
    const failed = await svc.named('AuthenticationFailed_v1', 4);
    expect(failed.map((e) => e.failure_reason)).toEqual([
      'invalid_code',
      'invalid_code',
      'invalid_code',
      'too_many_attempts',
    ]);
    expect(failed.every((e) => e.failed_authn_method === 'otp_via_email')).toBe(true);
  });

  it('refuses a code after ten minutes', async () => {
    const clock = manualClock(Date.now());
    svc = await emailService({ clock });
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    clock.advance(10 * 60_000 + 1);
    const late = await svc.verify({ challenge_id, code });
    await expectStatus(late, 401);
    expect(late.json.errors[0].message).toContain('expired');
  });

  it('limits the messages sent for one handle, with Retry-After', async () => {
    svc = await emailService({ options: { sendHandleRateLimit: { perMinute: 1, burst: 2 } } });
    await svc.addPerson('ada@example.com');
    await expectStatus(await svc.start('ada@example.com', 'otp_via_email', '203.0.113.1'), 202);
    await expectStatus(await svc.start('ada@example.com', 'email_link', '203.0.113.2'), 202);
    const third = await svc.start('ADA@example.com', 'otp_via_email', '203.0.113.3');
    await expectStatus(third, 429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    // The limit is the handle's: an unknown one has a budget of its own, and gets the same 429 past it.
    await expectStatus(await svc.start('nobody@example.com', 'otp_via_email'), 202);
  });

  it('limits the codes tried from one address across challenges', async () => {
    svc = await emailService({ options: { verifyAddressRateLimit: { perMinute: 1, burst: 2 } } });
    const ids = [];
    for (const n of [1, 2, 3])
      ids.push((await svc.start(`p${n}@example.com`, 'otp_via_email')).json.result.challenge_id);
    await expectStatus(await svc.verify({ challenge_id: ids[0], code: '111111' }, '198.51.100.9'), 401);
    await expectStatus(await svc.verify({ challenge_id: ids[1], code: '111111' }, '198.51.100.9'), 401);
    const third = await svc.verify({ challenge_id: ids[2], code: '111111' }, '198.51.100.9');
    await expectStatus(third, 429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refuses bodies that break a rule with a 400 naming the member', async () => {
    svc = await emailService();
    const phone = await svc.start({ type: 'phone_number', value: '+14155550100' }, 'otp_via_email');
    await expectStatus(phone, 400);
    expect(phone.json.errors[0].message).toContain('handle.type');
    const method = await svc.start('ada@example.com', 'sms');
    await expectStatus(method, 400);
    expect(method.text).toContain('method');
    const id = await svc.verify({ challenge_id: 'not-a-uuid', code: '123456' });
    await expectStatus(id, 400);
    expect(id.text).toContain('challenge_id');
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const letters = await svc.verify({ challenge_id, code: 'abcdef' });
    await expectStatus(letters, 400);
    expect(letters.json.errors[0].message).toContain('code: must be the 6-digit code');
    const none = await svc.verify({ challenge_id });
    await expectStatus(none, 400);
    expect(none.json.errors[0].message).toContain('code: required');
  });

  it('gives another organization nothing: its challenge_id and code sign nobody in there', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const hostile = await svc.service.ctx.orgs.create('Hostile');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    const there = await svc.verify({ challenge_id, code }, '203.0.113.66', {
      orgId: hostile.organization.id,
    });
    await expectStatus(there, 401);
    expect(there.json.errors[0].message).toContain('no email sign-in is pending');
    // The hostile organization asking for the same address sends the person nothing: no such person there.
    await expectStatus(
      await svc.start('ada@example.com', 'otp_via_email', '203.0.113.66', { orgId: hostile.organization.id }),
      202,
    );
    await settle();
    expect(svc.smtp.received).toHaveLength(1);
    // And the real challenge still works at home.
    await expectStatus(await svc.verify({ challenge_id, code }), 200);
  });

  it('refuses a method the policy does not allow with 403, sending nothing', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const policy = { first_factors: ['password', 'email_link'], second_factor: 'off' };
    await expectStatus(await svc.call('PUT', '/organizations/authentication-policy', { body: policy }), 200);
    const refused = await svc.start('ada@example.com', 'otp_via_email');
    await expectStatus(refused, 403);
    expect(refused.json.errors[0].message).toContain('does not allow otp_via_email');
    const [failed] = await svc.named('AuthenticationFailed_v1', 1);
    expect(failed).toMatchObject({
      failed_authn_method: 'otp_via_email',
      failure_reason: 'method_not_allowed',
    });
    await expectStatus(await svc.start('ada@example.com', 'email_link'), 202);
    await svc.mail(1);
    await settle();
    expect(svc.smtp.received).toHaveLength(1);
  });

  it('refuses a code once the policy stopped allowing its method', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    const policy = { first_factors: ['password'], second_factor: 'off' };
    await expectStatus(await svc.call('PUT', '/organizations/authentication-policy', { body: policy }), 200);
    await expectStatus(await svc.verify({ challenge_id, code }), 403);
    const [failed] = await svc.named('AuthenticationFailed_v1', 1);
    expect(failed).toMatchObject({
      failed_authn_method: 'otp_via_email',
      failure_reason: 'method_not_allowed',
    });
  });

  it('issues the token itself when the factors plugin is not enabled', async () => {
    svc = await emailService({ withoutFactors: true });
    const personId = await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const verified = await svc.verify({ challenge_id, code: await svc.code(1) });
    await expectStatus(verified, 200);
    expect(decodeJwt(verified.json.result.token)).toMatchObject({
      person_id: personId,
      authenticated_methods: ['otp_via_email'],
    });
    const [event] = await svc.named('AuthenticationSucceeded_v1', 1);
    expect(event).toMatchObject({ person_id: personId, success_authn_method: 'otp_via_email' });
  });

  it('gives one token for two racing requests with the right code', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    const answers = await Promise.all([1, 2, 3].map(() => svc!.verify({ challenge_id, code })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401]);
  });

  it('signs in no disabled person, even with the right code', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'otp_via_email')).json.result;
    const code = await svc.code(1);
    await expectStatus(await svc.call('PATCH', `/persons/${personId}`, { body: { active: false } }), 200);
    const refused = await svc.verify({ challenge_id, code });
    await expectStatus(refused, 401);
    const [failed] = await svc.named('AuthenticationFailed_v1', 1);
    expect(failed).toMatchObject({ failure_reason: 'person_disabled', person_id: personId });
    // A disabled person is sent no code at all.
    await expectStatus(await svc.start('ada@example.com', 'otp_via_email'), 202);
    await settle();
    expect(svc.smtp.received).toHaveLength(1);
  });
});
