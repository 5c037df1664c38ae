import { afterEach, describe, expect, it } from 'bun:test';
import { ServiceError } from '../../../core/errors.ts';
import { definePlugin } from '../../../core/plugin.ts';
import { beforeTokenIssued } from '../../../core/tokens/before-token-issued.ts';
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

/** A token_minted stand-in that blocks every issuance for an authentication. */
const blocker = definePlugin({
  id: 'blocker',
  setup: () => ({
    attach: [
      beforeTokenIssued.attach({
        match: (d) => d.issuer === 'authentication',
        run: () => {
          throw new ServiceError(403, 'TOKEN_BLOCKED', 'the token_minted webhook refused the token');
        },
      }),
    ],
  }),
});

describe('PUT /persons/{person_id}/credentials/password', () => {
  it('refuses short, long and common passwords with 400 naming the rule', async () => {
    svc = await passwordService();
    const p = await svc.addPerson([EMAIL]);
    const cases: [unknown, string][] = [
      [{ password: 'short' }, 'password must be 8 to 256 characters (got 5)'],
      [{ password: 'x'.repeat(257) }, 'password must be 8 to 256 characters (got 257)'],
      [{ password: 'Password123' }, 'password is one of the most common passwords'],
      [{ password: 'iloveyou1' }, 'password is one of the most common passwords'],
      [{ password_hash: '$1$md5$hash' }, 'password_hash must be an argon2id PHC string'],
      [{}, 'exactly one of password and password_hash'],
      [{ password: GOOD, password_hash: '$2b$' }, 'exactly one of password and password_hash'],
      [{ password: 42 }, 'password'],
    ];
    for (const [body, message] of cases) {
      const res = await svc.setPassword(p.personId, body);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
  });

  it('counts characters after NFC: eight accented letters are eight', async () => {
    svc = await passwordService();
    const p = await svc.addPerson([EMAIL]);
    const decomposed = 'e\u0301'.repeat(8);
    await expectStatus(await svc.setPassword(p.personId, { password: decomposed }), 204);
    await expectStatus(await svc.signIn({ handle: EMAIL, password: '\u00e9'.repeat(8) }), 200);
  });

  it('answers 404 for an unknown person and emits PasswordChanged_v1 from the admin API', async () => {
    svc = await passwordService();
    await expectStatus(await svc.setPassword(crypto.randomUUID(), { password: GOOD }), 404);
    const p = await svc.addPerson([EMAIL]);
    await expectStatus(await svc.setPassword(p.personId, { password: GOOD }), 204);
    const [event] = await svc.eventsNamed('PasswordChanged_v1');
    expect(event).toMatchObject({
      person_id: p.personId,
      region: 'us-iowa',
      handle: { type: 2, value: 'ada@example.com' },
      initiated_by: 1,
    });
    expect(JSON.stringify(event)).not.toContain(GOOD);
  });

  it('refuses a password for an anonymous person, which has no handle for PasswordChanged_v1', async () => {
    svc = await passwordService();
    const anon = await svc.call('POST', '/persons/anonymous', { key: null });
    await expectStatus(anon, 201);
    const res = await svc.setPassword(anon.json.result.person_id, { password: GOOD });
    await expectStatus(res, 409);
    expect(res.json.errors[0].message).toContain('has no handle');
    expect(await svc.eventsNamed('PasswordChanged_v1', 0)).toEqual([]);
  });
});

describe('authentication events', () => {
  it('emits AuthenticationSucceeded_v1 with the handle, analytics and browser metadata', async () => {
    svc = await passwordService();
    const p = await svc.addPerson([EMAIL]);
    await expectStatus(await svc.setPassword(p.personId, { password: GOOD }), 204);
    const headers = {
      // The proxy (TRUSTED_PROXY_HOPS=1) appended the address it saw; the entry before it is the client's.
      'x-forwarded-for': '10.0.0.1, 198.51.100.23',
      'user-agent': 'TestBrowser/1.0',
      referer: 'https://app.example.com/login',
      'Service-SDK-Version': '2.3.4',
    };
    await expectStatus(await svc.signIn({ handle: EMAIL, password: GOOD }, headers), 200);
    const [ok] = await svc.eventsNamed('AuthenticationSucceeded_v1');
    expect(ok).toMatchObject({
      person_id: p.personId,
      region: 'us-iowa',
      success_authn_method: 'password',
      authenticated_methods: ['password'],
      handle: { type: 2, value: 'ada@example.com' },
      analytics_metadata: { client_ip_address: '198.51.100.23' },
      browser_metadata: {
        user_agent: 'TestBrowser/1.0',
        window_location: 'https://app.example.com/login',
        service_sdk_version: '2.3.4',
      },
    });
    // The reference's spelling of the version header (its SlashID-SdkVersion) is read as well.
    const { 'Service-SDK-Version': _, ...others } = headers;
    await expectStatus(
      await svc.signIn({ handle: EMAIL, password: GOOD }, { ...others, 'Service-SdkVersion': '2.3.5' }),
      200,
    );
    const again = (await svc.eventsNamed('AuthenticationSucceeded_v1', 2))[1];
    expect(again).toMatchObject({ browser_metadata: { service_sdk_version: '2.3.5' } });
    await expectStatus(await svc.signIn({ handle: EMAIL, password: 'wrong password' }, headers), 401);
    const [failed] = await svc.eventsNamed('AuthenticationFailed_v1');
    // The handle names the person, but nobody authenticated: the spec's person_id, region and
    // authenticated_methods come "only if previously authenticated".
    for (const member of ['person_id', 'region', 'authenticated_methods'])
      expect(failed).not.toHaveProperty(member);
    expect(failed).toMatchObject({
      failed_authn_method: 'password',
      failure_reason: 'invalid_credentials',
      failure_detail: 'the password does not match the one set for this handle',
      handle: { type: 2, value: 'ada@example.com' },
      analytics_metadata: { client_ip_address: '198.51.100.23' },
    });
    expect(JSON.stringify(svc.events)).not.toContain('wrong password');
  });

  it('answers 403 and emits AuthenticationFailed_v1 when the hook blocks the token', async () => {
    svc = await passwordService({ extra: [blocker] });
    const p = await svc.addPerson([EMAIL]);
    await expectStatus(await svc.setPassword(p.personId, { password: GOOD }), 204);
    const res = await svc.signIn({ handle: EMAIL, password: GOOD });
    await expectStatus(res, 403);
    expect(res.json.errors[0].message).toContain('token_minted webhook refused');
    const [failed] = await svc.eventsNamed('AuthenticationFailed_v1');
    expect(failed).toMatchObject({
      person_id: p.personId,
      // The password had succeeded: the spec's authenticated_methods, for a failure after authenticating.
      authenticated_methods: ['password'],
      failure_reason: 'token_blocked',
      failure_detail: 'the token_minted webhook refused the token',
    });
    expect(await svc.eventsNamed('AuthenticationSucceeded_v1', 0)).toEqual([]);
    // Anonymous persons' tokens are not matched by this handler.
    await expectStatus(await svc.call('POST', '/persons/anonymous', { key: null }), 201);
  });
});
