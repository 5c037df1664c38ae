import { afterEach, describe, expect, it } from 'bun:test';
import { passwordAuthenticator } from '../../../core/capabilities/password-authenticator.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { passwordService } from './fixture.ts';

type Svc = Awaited<ReturnType<typeof passwordService>>;
let svc: Svc | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const EMAIL = { type: 'email_address' as const, value: 'ada@example.com' };
const GOOD = 'correct horse battery staple';
const REQUEST = { clientIpAddress: '198.51.100.7', userAgent: 'probe/1', origin: 'https://ids.test' };

async function withPerson(env: Record<string, string> = {}) {
  svc = await passwordService({ env });
  const person = await svc.addPerson([EMAIL]);
  await expectStatus(await svc.setPassword(person.personId, { password: GOOD }), 204);
  const authenticator = svc.service.ctx.capability(passwordAuthenticator);
  if (!authenticator) throw new Error('the password plugin provides no passwordAuthenticator');
  return { s: svc, person, check: authenticator.check };
}

describe('the passwordAuthenticator capability', () => {
  it('answers the person and the authentication for the right password, handle normalised', async () => {
    const { s, person, check } = await withPerson();
    const checked = await check(s.org.id, {
      handle: { type: 'email_address', value: ' Ada@Example.com ' },
      password: GOOD,
      request: REQUEST,
    });
    expect(checked).toMatchObject({
      ok: true,
      personId: person.personId,
      authentication: { handle: EMAIL, method: 'password' },
    });
    // The caller reports the success; the check itself publishes no AuthenticationSucceeded_v1.
    expect(s.events.filter((e) => e.event_metadata.event_name === 'AuthenticationSucceeded_v1')).toEqual([]);
  });

  it('answers invalid_credentials alike for a wrong password, an unknown and a malformed handle', async () => {
    const { s, check } = await withPerson();
    const wrong = await check(s.org.id, { handle: EMAIL, password: 'not it at all', request: REQUEST });
    const unknown = await check(s.org.id, {
      handle: { type: 'email_address', value: 'nobody@example.com' },
      password: GOOD,
      request: REQUEST,
    });
    const malformed = await check(s.org.id, {
      handle: { type: 'email_address', value: 'ada@' },
      password: GOOD,
      request: REQUEST,
    });
    for (const c of [wrong, unknown, malformed])
      expect(c).toEqual({ ok: false, reason: 'invalid_credentials' });
    // Each refusal is reported, the malformed handle's too (as one nobody can have).
    const failed = await s.eventsNamed('AuthenticationFailed_v1', 3);
    expect(failed.map((e) => e.failure_reason).sort()).toEqual([
      'invalid_credentials',
      'unknown_handle',
      'unknown_handle',
    ]);
    expect(failed.find((e) => (e.handle as { value: string }).value === 'ada@')).toMatchObject({
      handle: { type: 2, value: 'ada@' },
      failure_detail: expect.stringContaining('no person can have this handle'),
    });
    expect(failed[0]).toMatchObject({
      failed_authn_method: 'password',
      analytics_metadata: { client_ip_address: '198.51.100.7' },
    });
    // The service reports the failure (source Cloud): no browser_metadata, the SDK's member.
    expect(failed[0]).not.toHaveProperty('browser_metadata');
  });

  it('shares the per-handle limit with POST /authenticate/password and says when to retry', async () => {
    const { s, check } = await withPerson({ PASSWORD_HANDLE_RATE_LIMIT: '1/2' });
    await expectStatus(await s.signIn({ handle: EMAIL, password: 'wrong one' }), 401);
    expect(await check(s.org.id, { handle: EMAIL, password: 'wrong', request: {} })).toMatchObject({
      ok: false,
      reason: 'invalid_credentials',
    });
    const limited = await check(s.org.id, { handle: EMAIL, password: GOOD, request: {} });
    expect(limited).toMatchObject({ ok: false, reason: 'rate_limited' });
    expect(limited.ok === false && limited.retryAfter).toBeGreaterThan(0);
    await expectStatus(await s.signIn({ handle: EMAIL, password: GOOD }), 429);
  });

  it('limits attempts per client address', async () => {
    const { s, check } = await withPerson({ PASSWORD_ADDRESS_RATE_LIMIT: '1/2' });
    const from = (ip: string, value: string) =>
      check(s.org.id, {
        handle: { type: 'username', value },
        password: 'x',
        request: { clientIpAddress: ip },
      });
    expect((await from('198.51.100.7', 'a')).ok).toBe(false);
    expect(await from('198.51.100.7', 'b')).toMatchObject({ reason: 'invalid_credentials' });
    expect(await from('198.51.100.7', 'c')).toMatchObject({ reason: 'rate_limited' });
    expect(await from('203.0.113.9', 'c')).toMatchObject({ reason: 'invalid_credentials' });
  });
});
