import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import type { Clock } from '../../core/ports/clock.ts';
import { totp } from '../../plugins/totp/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { createPerson, identityPlugins } from '../helpers/identity-service.ts';
import { type CallOptions, startTestService, type TestService } from '../helpers/service.ts';
import { smtpTls, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { raceLastTwoFirstFactors } from '../unit/factors/last-factor-race.ts';
import { totpCode } from '../unit/totp/fixture.ts';
import { isolatedPostgres } from './support.ts';

// The authentication factors end to end on Postgres with two replicas sharing one schema: what one
// replica stores (the policy, a TOTP enrolment and its last step, an mfa_token, an email challenge), the
// other sees at once. TOTP codes come from the test's own RFC 6238 (node:crypto), mail from a real SMTP
// server on loopback.

/** The real time moved on by whole TOTP steps when the test says so (both replicas read it). */
function steppingClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    rate: 1,
    advance(ms) {
      offset += ms;
    },
  };
}

const clock = steppingClock();
let smtp: TestSmtpServer;
let a: TestService;
let b: TestService;
let drop: () => Promise<void>;
/** The organization's id and key: the one made on replica A, named on both. */
let asOrg: CallOptions;

beforeAll(async () => {
  const pg = await isolatedPostgres('factors');
  drop = pg.drop;
  smtp = await startSmtpServer();
  const env = {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'no-reply@ids.test',
    NODE_EXTRA_CA_CERTS: smtpTls().caFile,
  };
  const definition = { plugins: [...identityPlugins(), totp()] };
  a = await startTestService({ storage: pg.storage, env, definition, clock });
  b = await startTestService({ storage: await pg.another(), env, definition, clock });
  // Both replicas' workers run: either may send a message queued by the other.
  await a.service.start();
  await b.service.start();
  asOrg = { orgId: a.org.id, key: a.apiKey };
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await smtp?.stop();
  await drop?.();
});

/** An end user's request (OrgID only) to a replica. */
const user = (t: TestService, path: string, body: unknown) =>
  t.call('POST', path, { orgId: a.org.id, key: null, body });

const REQUIRED = {
  first_factors: ['password', 'webauthn', 'otp_via_email', 'email_link'],
  second_factor: 'required',
  second_factors: ['totp', 'otp_via_email'],
};

let ada: Awaited<ReturnType<typeof createPerson>>;
let secret: string;

describe('authentication factors on Postgres, two replicas', () => {
  it('applies a policy changed on A to the next sign-in on B, and to tokens B validates', async () => {
    ada = await createPerson(a, asOrg);
    const before = await user(b, '/authenticate/password', { handle: ada.handle, password: ada.password });
    await expectStatus(before, 200);
    const oneFactor: string = before.json.result.token;

    await expectStatus(
      await a.call('PUT', '/organizations/authentication-policy', { ...asOrg, body: REQUIRED }),
      200,
    );
    const read = await b.call('GET', '/organizations/authentication-policy', asOrg);
    await expectStatus(read, 200);
    expect(read.json.result).toMatchObject({
      second_factor: 'required',
      second_factors: ['totp', 'otp_via_email'],
    });

    // Ada has no second factor yet: under `required` her password alone no longer signs her in on B.
    const after = await user(b, '/authenticate/password', { handle: ada.handle, password: ada.password });
    await expectStatus(after, 403);
    expect(after.text).toContain('requires a second factor');
    // The token B issued under the old policy no longer validates on B.
    const validated = await b.call('POST', '/token/validate', { ...asOrg, body: { token: oneFactor } });
    await expectStatus(validated, 200);
    expect(validated.json.result).toMatchObject({ valid: false, invalidity_reason: 'not_enough_factors' });
  });

  it('enrols TOTP on A, and completes on B a second step whose mfa_token A answered', async () => {
    const started = await a.call('POST', `/persons/${ada.personId}/credentials/totp`, {
      ...asOrg,
      body: { name: 'Phone' },
    });
    await expectStatus(started, 201);
    secret = started.json.result.secret;
    const confirmed = await a.call(
      'POST',
      `/persons/${ada.personId}/credentials/totp/${started.json.result.credential_id}/confirm`,
      { ...asOrg, body: { code: totpCode(secret, clock.now()) } },
    );
    await expectStatus(confirmed, 200);
    // B lists the credential A enrolled.
    const listed = await b.call('GET', `/persons/${ada.personId}/credentials`, asOrg);
    await expectStatus(listed, 200);
    expect(listed.json.result.map((c: { type: string }) => c.type).sort()).toEqual(['password', 'totp']);

    clock.advance(30_000); // the confirming code's step is spent: the next code is the next step's
    const first = await user(a, '/authenticate/password', { handle: ada.handle, password: ada.password });
    await expectStatus(first, 200);
    expect(first.json.result.methods).toContain('totp');
    const mfaToken: string = first.json.result.mfa_token;
    const code = totpCode(secret, clock.now());

    const done = await user(b, '/authenticate/mfa', { mfa_token: mfaToken, method: 'totp', code });
    await expectStatus(done, 200);
    expect(done.json.result.person_id).toBe(ada.personId);
    expect(decodeJwt(done.json.result.token).authenticated_methods).toEqual(['password', 'totp']);
    const validated = await b.call('POST', '/token/validate', {
      ...asOrg,
      body: { token: done.json.result.token },
    });
    expect(validated.json.result).toMatchObject({ valid: true });

    // Spent on B: neither the mfa_token nor the code counts again on A.
    await expectStatus(
      await user(a, '/authenticate/mfa', { mfa_token: mfaToken, method: 'totp', code }),
      401,
    );
    const again = await user(a, '/authenticate/password', { handle: ada.handle, password: ada.password });
    await expectStatus(again, 200);
    await expectStatus(
      await user(a, '/authenticate/mfa', { mfa_token: again.json.result.mfa_token, method: 'totp', code }),
      401,
    );
  });

  it('verifies on B an email code requested on A, and finishes the sign-in with TOTP on A', async () => {
    const email = `grace-${process.pid}@example.com`;
    const made = await a.call('POST', '/persons', {
      ...asOrg,
      body: { handles: [{ type: 'email_address', value: email }] },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    // Grace enrols TOTP on B (her second factor: the first is the code by email).
    const started = await b.call('POST', `/persons/${personId}/credentials/totp`, asOrg);
    await expectStatus(started, 201);
    const graceSecret: string = started.json.result.secret;
    await expectStatus(
      await b.call(
        'POST',
        `/persons/${personId}/credentials/totp/${started.json.result.credential_id}/confirm`,
        {
          ...asOrg,
          body: { code: totpCode(graceSecret, clock.now()) },
        },
      ),
      200,
    );
    clock.advance(30_000);

    const sent = smtp.received.length;
    const requested = await user(a, '/authenticate/email', {
      handle: { type: 'email_address', value: email },
      method: 'otp_via_email',
    });
    await expectStatus(requested, 202);
    const message = (await smtp.waitFor(sent + 1))[sent]!;
    expect(message.envelopeTo).toEqual([email]);
    const code = /^(\d{6})$/m.exec(message.parsed.text ?? '')?.[1];
    expect(code).toBeDefined();

    // A wrong code on B is refused and leaves the challenge open; the right one answers the second step.
    const wrong = code === '000000' ? '111111' : '000000';
    const challenge_id: string = requested.json.result.challenge_id;
    await expectStatus(
      await user(b, '/authenticate/email/verify', { challenge_id, code: wrong }),
      [400, 401],
    );
    const verified = await user(b, '/authenticate/email/verify', { challenge_id, code });
    await expectStatus(verified, 200);
    expect(verified.json.result).toMatchObject({
      person_id: personId,
      mfa_required: true,
      methods: ['totp'],
    });
    const done = await user(a, '/authenticate/mfa', {
      mfa_token: verified.json.result.mfa_token,
      method: 'totp',
      code: totpCode(graceSecret, clock.now()),
    });
    await expectStatus(done, 200);
    expect(decodeJwt(done.json.result.token).authenticated_methods).toEqual(['otp_via_email', 'totp']);
    await expectStatus(await user(a, '/authenticate/email/verify', { challenge_id, code }), [400, 401]);
  });

  it('sends on B the code of a second step begun on A, and completes it on A', async () => {
    const email = `hedy-${process.pid}@example.com`;
    const made = await a.call('POST', '/persons', {
      ...asOrg,
      body: { handles: [{ type: 'email_address', value: email }] },
    });
    await expectStatus(made, 201);
    const password = 'correct horse battery hedy';
    await expectStatus(
      await a.call('PUT', `/persons/${made.json.result.person_id}/credentials/password`, {
        ...asOrg,
        body: { password },
      }),
      204,
    );
    const first = await user(a, '/authenticate/password', {
      handle: { type: 'email_address', value: email },
      password,
    });
    await expectStatus(first, 200);
    // Under `required`, a person with an email address and no enrolled factor is offered a code by email.
    expect(first.json.result).toMatchObject({ mfa_required: true, methods: ['otp_via_email'] });
    const mfaToken: string = first.json.result.mfa_token;
    const before = smtp.received.length;
    const asked = await user(b, '/authenticate/mfa/email', { mfa_token: mfaToken });
    await expectStatus(asked, 202);
    const second = (await smtp.waitFor(before + 1))[before]!;
    expect(second.envelopeTo).toEqual([email]);
    const secondCode = /^(\d{6})$/m.exec(second.parsed.text ?? '')?.[1];
    expect(secondCode).toBeDefined();
    const done = await user(a, '/authenticate/mfa', {
      mfa_token: mfaToken,
      method: 'otp_via_email',
      challenge_id: asked.json.result.challenge_id,
      code: secondCode,
    });
    await expectStatus(done, 200);
    expect(decodeJwt(done.json.result.token).authenticated_methods).toEqual(['password', 'otp_via_email']);
  });

  it('keeps one of the last two first factors deleted at once on A and on B: one 204, one 409', async () => {
    await expectStatus(
      await a.call('PUT', '/organizations/authentication-policy', {
        ...asOrg,
        body: { first_factors: ['password', 'webauthn'], second_factor: 'off' },
      }),
      200,
    );
    await raceLastTwoFirstFactors({
      first: a.call,
      second: b.call,
      storage: a.service.ctx.storage,
      orgId: a.org.id,
      as: asOrg,
      rounds: 10,
    });
  });
});
