import { afterEach, describe, expect, it } from 'bun:test';
import { scaledClock } from '../../../adapters/clock/system.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startHttpsReceiver } from '../../helpers/tls.ts';
import { until } from '../../helpers/webhooks.ts';
import { type ResetTestService, resetService } from './fixture.ts';

let svc: ResetTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const OLD = 'correct horse battery staple';
const NEW = 'a new and much better passphrase';
const ACCEPTED = { result: { status: 'accepted' } };
const email = (value: string) => ({ type: 'email_address', value });

/** A little while for a message that must not come: the worker and the queue are given time to act. */
const settle = () => new Promise((r) => setTimeout(r, 1500));

describe('password reset through the API', () => {
  it('sets a new password with the emailed token: the new one signs in, the old one no longer does', async () => {
    svc = await resetService();
    const receiver = startHttpsReceiver(() => new Response(null, { status: 204 }));
    try {
      const target = receiver.url('/events', 'a.hooks.test');
      const hook = await svc.call('POST', '/organizations/webhooks', {
        body: { name: 'events', target_url: target },
      });
      await expectStatus(hook, 201);
      await expectStatus(
        await svc.call('POST', `/organizations/webhooks/${hook.json.result.id}/triggers`, {
          body: { trigger_type: 'event', trigger_name: 'PasswordChanged_v1' },
        }),
        201,
      );
      const personId = await svc.addPerson('ada@example.com', OLD);
      const asked = await svc.requestReset(email(' Ada@Example.com '));
      await expectStatus(asked, 202);
      expect(asked.json).toEqual(ACCEPTED);

      const { mail, link, token } = await svc.message(1);
      expect(mail.envelopeTo).toEqual(['ada@example.com']);
      expect(mail.parsed.subject).toBe('Reset your Acme password');
      expect(link).toBe(`${svc.baseUrl}/password/reset?token=${token}`);
      expect(mail.parsed.html).toContain(`href="${svc.baseUrl}/password/reset?token=${token}"`);
      expect(mail.parsed.text).toContain('within 15 minutes');

      await expectStatus(await svc.confirm(token, NEW), 204);
      await expectStatus(await svc.signIn('ada@example.com', NEW), 200);
      await expectStatus(await svc.signIn('ada@example.com', OLD), 401);

      // The admin API's change (initiated_by 1) came first; the reset's is the EndUser one (2).
      await until(() => receiver.requests.length >= 2, 15_000, 'two PasswordChanged_v1 deliveries');
      const events = await Promise.all(
        receiver.requests.map(
          async (r) => (await svc!.verify({ body: r.body, url: target })).trigger_content,
        ),
      );
      expect(events.map((e) => (e as { initiated_by: number }).initiated_by).sort()).toEqual([1, 2]);
      const reset = events.find((e) => (e as { initiated_by: number }).initiated_by === 2);
      expect(reset).toMatchObject({
        person_id: personId,
        handle: { type: 2, value: 'ada@example.com' },
        initiated_by: 2,
        region: 'us-iowa',
      });
      expect(JSON.stringify(events)).not.toContain(token);
    } finally {
      await receiver.stop();
    }
  });

  it('answers an unknown handle with the same 202 body in comparable time, and sends nothing', async () => {
    svc = await resetService();
    for (let i = 0; i < 5; i++) await svc.addPerson(`known${i}@example.com`);
    const known: number[] = [];
    const unknown: number[] = [];
    const time = async (list: number[], address: string, ip: string) => {
      const started = performance.now();
      const res = await svc!.requestReset(email(address), ip);
      list.push(performance.now() - started);
      await expectStatus(res, 202);
      expect(res.json).toEqual(ACCEPTED);
    };
    // Each request is timed on an idle service: the previous one's message has gone out.
    for (let i = 0; i < 5; i++) {
      await time(known, `known${i}@example.com`, `198.51.100.${i}`);
      await svc.smtp.waitFor(i + 1);
      await time(unknown, `nobody${i}@example.com`, `198.51.100.${i}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await settle();
    expect(svc.smtp.received.map((m) => m.envelopeTo[0]).sort()).toEqual(
      [0, 1, 2, 3, 4].map((i) => `known${i}@example.com`),
    );
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
    // The answer waits for the same work either way (limits and one durable publish); the lookup and
    // the message come after it. A lookup or a send in the request would show as a gap here.
    expect(Math.abs(median(known) - median(unknown))).toBeLessThan(100);
  });

  it('sends nothing for a username or phone handle, a disabled person, or an anonymous one', async () => {
    svc = await resetService();
    const made = await svc.call('POST', '/persons', {
      body: { handles: [email('off@example.com'), { type: 'username', value: 'ada' }], active: false },
    });
    await expectStatus(made, 201);
    await svc.addPerson('on@example.com');
    for (const handle of [
      { type: 'username', value: 'ada' },
      { type: 'phone_number', value: '+12025550142' },
      email('off@example.com'),
    ]) {
      const res = await svc.requestReset(handle);
      await expectStatus(res, 202);
      expect(res.json).toEqual(ACCEPTED);
    }
    await expectStatus(await svc.requestReset(email('on@example.com')), 202);
    await svc.smtp.waitFor(1);
    await settle();
    expect(svc.smtp.received.map((m) => m.envelopeTo[0])).toEqual(['on@example.com']);
  });

  it('refuses a malformed handle with 400 naming the rule', async () => {
    svc = await resetService();
    const res = await svc.requestReset(email('not an address'));
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('handle.value: must be an email address');
    await expectStatus(await svc.requestReset({ type: 'fax', value: '1' }), 400);
  });

  it('refuses a used, a superseded and an unknown token with 400 naming why, changing nothing', async () => {
    svc = await resetService();
    await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const first = await svc.message(1);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const second = await svc.message(2);
    expect(second.token).not.toBe(first.token);

    const superseded = await svc.confirm(first.token, NEW);
    await expectStatus(superseded, 400);
    expect(superseded.json.errors[0].message).toBe(
      'token: superseded by a newer reset request; use the link of the latest message',
    );
    await expectStatus(await svc.signIn('ada@example.com', OLD), 200);

    const unknown = await svc.confirm('A'.repeat(43), NEW);
    await expectStatus(unknown, 400);
    expect(unknown.json.errors[0].message).toBe(
      'token: unknown; no reset was asked for with this token in this organization',
    );
    await expectStatus(await svc.confirm('short', NEW), 400);

    await expectStatus(await svc.confirm(second.token, NEW), 204);
    const used = await svc.confirm(second.token, 'yet another good passphrase');
    await expectStatus(used, 400);
    expect(used.json.errors[0].message).toBe(
      'token: already used; ask for a new reset if the password must change again',
    );
    await expectStatus(await svc.signIn('ada@example.com', NEW), 200);
  });

  it('voids the open link when the password is set another way', async () => {
    svc = await resetService();
    const personId = await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    await expectStatus(
      await svc.call('PUT', `/persons/${personId}/credentials/password`, { body: { password: NEW } }),
      204,
    );
    const res = await svc.confirm(token, 'yet another good passphrase');
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toBe(
      'token: void, the password was changed since the link was sent; ask for a new one',
    );
  });

  it('refuses the link of a person disabled since it was sent, changing nothing, and takes it once enabled', async () => {
    svc = await resetService();
    const personId = await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    const path = `/persons/${personId}`;
    await expectStatus(await svc.call('PATCH', path, { body: { active: false } }), 200);
    const res = await svc.confirm(token, NEW);
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toBe(
      'token: void while the person is disabled; the organization must enable it first',
    );
    const person = await svc.call('GET', path);
    expect(person.json.result.handles[0].verified).toBe(false);
    await expectStatus(await svc.call('PATCH', path, { body: { active: true } }), 200);
    await expectStatus(await svc.signIn('ada@example.com', OLD), 200);
    await expectStatus(await svc.confirm(token, NEW), 204);
    await expectStatus(await svc.signIn('ada@example.com', NEW), 200);
  });

  it('applies the password policy, leaving the token usable', async () => {
    svc = await resetService();
    await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    for (const [password, rule] of [
      ['short', 'password must be 8 to 256 characters (got 5)'],
      ['password123', 'password is one of the most common passwords'],
    ] as const) {
      const res = await svc.confirm(token, password);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(rule);
    }
    await expectStatus(await svc.signIn('ada@example.com', OLD), 200);
    await expectStatus(await svc.confirm(token, NEW), 204);
  });

  it('marks the email address the link went to verified once the reset succeeds, not before', async () => {
    svc = await resetService();
    const personId = await svc.addPerson('ada@example.com', OLD);
    const verified = async () =>
      (await svc!.call('GET', `/persons/${personId}`)).json.result.handles.find(
        (h: { type: string }) => h.type === 'email_address',
      )?.verified;
    expect(await verified()).toBe(false);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    // A refused password changes nothing: the link proves the address only when it resets.
    await expectStatus(await svc.confirm(token, 'short'), 400);
    expect(await verified()).toBe(false);
    await expectStatus(await svc.confirm(token, NEW), 204);
    expect(await verified()).toBe(true);
  });

  it("revokes the person's earlier tokens, not one issued after the reset", async () => {
    svc = await resetService();
    await svc.addPerson('ada@example.com', OLD);
    const before = (await svc.signIn('ada@example.com', OLD)).json.result.token;
    const validate = async (token: string) =>
      (await svc!.call('POST', '/token/validate', { body: { token } })).json.result;
    expect(await validate(before)).toMatchObject({ valid: true });
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    await expectStatus(await svc.confirm((await svc.message(1)).token, NEW), 204);
    const after = (await svc.signIn('ada@example.com', NEW)).json.result.token;
    expect(await validate(before)).toMatchObject({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'revoked',
    });
    expect(await validate(after)).toMatchObject({ valid: true });
  });

  it('keeps earlier tokens valid with PASSWORD_RESET_REVOKE_TOKENS=false', async () => {
    svc = await resetService({ env: { PASSWORD_RESET_REVOKE_TOKENS: 'false' } });
    await svc.addPerson('ada@example.com', OLD);
    const before = (await svc.signIn('ada@example.com', OLD)).json.result.token;
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    await expectStatus(await svc.confirm((await svc.message(1)).token, NEW), 204);
    const check = await svc.call('POST', '/token/validate', { body: { token: before } });
    expect(check.json.result).toMatchObject({ valid: true });
  });

  it('limits requests per handle and per client address with 429 and Retry-After', async () => {
    svc = await resetService({
      env: { PASSWORD_RESET_HANDLE_RATE_LIMIT: '1/2', PASSWORD_RESET_ADDRESS_RATE_LIMIT: '1/4' },
    });
    const handle = email('ada@example.com');
    await expectStatus(await svc.requestReset(handle, '198.51.100.1'), 202);
    await expectStatus(await svc.requestReset(handle, '198.51.100.2'), 202);
    const perHandle = await svc.requestReset(handle, '198.51.100.3');
    await expectStatus(perHandle, 429);
    expect(Number(perHandle.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(perHandle.json.errors[0].message).toContain('too many password reset requests for this handle');

    for (let i = 0; i < 4; i++)
      await expectStatus(await svc.requestReset(email(`x${i}@example.com`), '198.51.100.9'), 202);
    const perAddress = await svc.requestReset(email('y@example.com'), '198.51.100.9');
    await expectStatus(perAddress, 429);
    expect(perAddress.json.errors[0].message).toContain('from this address');
  });

  it('refuses a token past its 15 minutes', async () => {
    const clock = manualClock(Date.now());
    svc = await resetService({ clock });
    await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    clock.advance(15 * 60_000 + 1);
    const res = await svc.confirm(token, NEW);
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toBe(
      'token: expired (a reset link works for 15 minutes); ask for a new one',
    );
    await expectStatus(await svc.signIn('ada@example.com', OLD), 200);
  });

  it('never lets a token of one organization reset a person of another', async () => {
    svc = await resetService();
    const other = await svc.service.ctx.orgs.create('Other');
    const asOther = { orgId: other.organization.id, key: other.apiKey };
    await svc.addPerson('ada@example.com', OLD);
    await svc.addPerson('ada@example.com', OLD, asOther);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { token } = await svc.message(1);
    const res = await svc.confirm(token, NEW, { orgId: other.organization.id });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('token: unknown');
    await expectStatus(await svc.signIn('ada@example.com', OLD, { orgId: other.organization.id }), 200);
    await expectStatus(await svc.signIn('ada@example.com', OLD), 200);
    // And a request in the other organization for an address only this one has sends nothing.
    await expectStatus(
      await svc.requestReset(email('solo@example.com'), undefined, { orgId: other.organization.id }),
      202,
    );
    await svc.addPerson('solo@example.com');
    await settle();
    expect(svc.smtp.received).toHaveLength(1);
  });

  it("links to the organization's own reset page with the token appended", async () => {
    svc = await resetService();
    const bad = await svc.call('PUT', '/organizations/password-reset-settings', {
      body: { reset_url: 'http://app.example.com/reset' },
    });
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toContain('reset_url');
    const set = await svc.call('PUT', '/organizations/password-reset-settings', {
      body: { reset_url: 'https://app.example.com/account/reset?lang=en' },
    });
    await expectStatus(set, 200);
    const read = await svc.call('GET', '/organizations/password-reset-settings');
    expect(read.json.result).toEqual({ reset_url: 'https://app.example.com/account/reset?lang=en' });
    await svc.addPerson('ada@example.com', OLD);
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    const { link, token } = await svc.message(1);
    expect(link).toBe(`https://app.example.com/account/reset?lang=en&token=${token}`);
    await expectStatus(await svc.confirm(token, NEW), 204);
  });

  it('delivers the reset message once the SMTP server accepts again after refusing', async () => {
    // 600 times faster: the retries after 30 s and 1 minute come within a second or two.
    svc = await resetService({ clock: scaledClock(600), env: { PASSWORD_RESET_TTL_MINUTES: '120' } });
    await svc.addPerson('ada@example.com', OLD);
    svc.smtp.mode = 'defer';
    await expectStatus(await svc.requestReset(email('ada@example.com')), 202);
    await until(() => svc!.smtp.refused >= 2, 15_000, 'two refused attempts');
    expect(svc.smtp.received).toHaveLength(0);
    svc.smtp.mode = 'accept';
    const { token } = await svc.message(1);
    await expectStatus(await svc.confirm(token, NEW), 204);
    await expectStatus(await svc.signIn('ada@example.com', NEW), 200);
  });
});
