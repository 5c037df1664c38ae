import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { personCredentials } from '../../../core/factors/credentials.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { base32Decode, hotp, type TotpTestService, totpCode, totpService } from './fixture.ts';

let t: TotpTestService;
beforeAll(async () => {
  t = await totpService();
});
afterAll(() => t.stop());

const credentialsOf = async (personId: string, orgId = t.org.id) =>
  (await t.service.ctx.hooks.run(personCredentials, { orgId, personId })).flat();

describe("the test's own RFC 6238 implementation", () => {
  it('gives the RFC 6238 test vectors (SHA-1, 8 digits)', () => {
    const key = Buffer.from('12345678901234567890');
    expect(hotp(key, Math.floor(59 / 30), 8)).toBe('94287082');
    expect(hotp(key, Math.floor(1111111109 / 30), 8)).toBe('07081804');
    expect(hotp(key, Math.floor(20000000000 / 30), 8)).toBe('65353130');
  });
});

describe('TOTP enrolment', () => {
  it('answers a secret, its otpauth URI and QR code once, and counts it only once confirmed', async () => {
    const personId = await t.addPerson();
    const res = await t.enrol(personId, { body: { name: 'Phone' } });
    await expectStatus(res, 201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { credential_id, secret, otpauth_uri, qr_svg, expires_at } = res.json.result;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(secret)).toHaveLength(20);
    const uri = new URL(otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toMatch(/^\/Acme:person-\d+@example\.com$/);
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      issuer: 'Acme',
      secret,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
    expect(qr_svg.startsWith('<svg')).toBe(true);
    expect(qr_svg).toContain('<path');
    expect(Date.parse(expires_at)).toBe(t.clock.now() + 15 * 60_000);
    expect(await credentialsOf(personId)).toEqual([]);

    const done = await t.confirm(personId, credential_id, totpCode(secret, t.clock.now()));
    await expectStatus(done, 200);
    expect(done.headers.get('cache-control')).toBe('no-store');
    const codes: string[] = done.json.result.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}$/);
    expect(await credentialsOf(personId)).toEqual([
      {
        credentialId: credential_id,
        type: 'totp',
        name: 'Phone',
        createdAt: t.clock.now(),
        firstFactor: false,
        secondFactor: true,
      },
    ]);
    // Confirmed once: a second confirmation is a 409, whatever the code.
    t.clock.advance(30_000);
    const again = await t.confirm(personId, credential_id, totpCode(secret, t.clock.now()));
    await expectStatus(again, 409);
    expect(again.json.errors[0].message).toContain('confirmed already');
  });

  it('takes a code one step either side of now, and refuses one two steps away naming body.code', async () => {
    for (const [offset, status] of [
      [-30_000, 200],
      [30_000, 200],
      [-60_000, 400],
      [60_000, 400],
    ] as const) {
      const personId = await t.addPerson();
      const res = await t.enrol(personId);
      const { credential_id, secret } = res.json.result;
      const done = await t.confirm(personId, credential_id, totpCode(secret, t.clock.now() + offset));
      await expectStatus(done, status);
      if (status === 400) {
        expect(done.json.errors[0].message).toContain('body.code: is not the authenticator');
        expect(await credentialsOf(personId)).toEqual([]);
      }
    }
  });

  it('stores the secret sealed, bound to its row, and recovery codes only as digests', async () => {
    const personId = await t.addPerson();
    const { credentialId, secret, recoveryCodes } = await t.enrolled(personId);
    const [row] = await t.service.ctx.storage.query<{ secret: string }>(
      sql`select secret from totp_credentials where id = ${credentialId}`,
    );
    expect(row!.secret).not.toContain(secret);
    expect(await t.service.ctx.secrets.open(row!.secret, `totp-credential:${credentialId}:secret`)).toBe(
      secret,
    );
    await expect(
      t.service.ctx.secrets.open(row!.secret, `totp-credential:${crypto.randomUUID()}:secret`),
    ).rejects.toThrow();
    const digests = await t.service.ctx.storage.query<{ digest: string }>(
      sql`select digest from totp_recovery_codes where credential_id = ${credentialId}`,
    );
    expect(digests).toHaveLength(10);
    const stored = JSON.stringify(digests);
    for (const code of recoveryCodes) {
      expect(stored).not.toContain(code);
      expect(stored).not.toContain(code.replaceAll('-', ''));
    }
  });

  it('lets an enrolment lapse unconfirmed, and a new one replace an unconfirmed one', async () => {
    const personId = await t.addPerson();
    const first = (await t.enrol(personId)).json.result;
    const second = (await t.enrol(personId)).json.result;
    const replaced = await t.confirm(personId, first.credential_id, totpCode(first.secret, t.clock.now()));
    await expectStatus(replaced, 404);
    t.clock.advance(15 * 60_000);
    const lapsed = await t.confirm(personId, second.credential_id, totpCode(second.secret, t.clock.now()));
    await expectStatus(lapsed, 404);
    expect(lapsed.json.errors[0].message).toContain('not confirmed within its time');
  });

  it('replaces the confirmed authenticator only when a new one is confirmed', async () => {
    const personId = await t.addPerson();
    const old = await t.enrolled(personId);
    const next = (await t.enrol(personId)).json.result;
    // Until the new one is confirmed, the old one still signs in.
    expect((await credentialsOf(personId)).map((c) => c.credentialId)).toEqual([old.credentialId]);
    expect(await t.secondStep(personId, { code: totpCode(old.secret, t.clock.now()) })).toMatchObject({
      ok: true,
    });
    t.clock.advance(30_000);
    await expectStatus(
      await t.confirm(personId, next.credential_id, totpCode(next.secret, t.clock.now())),
      200,
    );
    t.clock.advance(30_000);
    expect((await credentialsOf(personId)).map((c) => c.credentialId)).toEqual([next.credential_id]);
    const oldCode = await t.secondStep(personId, { code: totpCode(old.secret, t.clock.now()) });
    expect(oldCode).toMatchObject({ ok: false, reason: 'invalid' });
    const oldRecovery = await t.secondStep(personId, { code: old.recoveryCodes[0] });
    expect(oldRecovery).toMatchObject({ ok: false, reason: 'invalid' });
  });

  it('renews the recovery codes of a confirmed authenticator: the earlier ones stop working', async () => {
    const personId = await t.addPerson();
    const { credentialId, recoveryCodes } = await t.enrolled(personId);
    const res = await t.call('POST', `/persons/${personId}/credentials/totp/${credentialId}/recovery-codes`);
    await expectStatus(res, 200);
    const renewed: string[] = res.json.result.recovery_codes;
    expect(renewed).toHaveLength(10);
    expect(await t.secondStep(personId, { code: recoveryCodes[0] })).toMatchObject({ ok: false });
    expect(await t.secondStep(personId, { code: renewed[0] })).toMatchObject({ ok: true });

    const pending = (await t.enrol(personId)).json.result;
    const early = await t.call(
      'POST',
      `/persons/${personId}/credentials/totp/${pending.credential_id}/recovery-codes`,
    );
    await expectStatus(early, 409);
  });

  it('refuses malformed input with 400 naming the field, before anything is stored', async () => {
    const personId = await t.addPerson();
    const { credential_id } = (await t.enrol(personId)).json.result;
    const cases: Array<[string, unknown, string]> = [
      ['/persons/not-a-uuid/credentials/totp', undefined, 'params.person_id: must be a UUID'],
      [`/persons/${personId}/credentials/totp`, { name: '' }, 'body.name: must not be empty'],
      [`/persons/${personId}/credentials/totp`, { name: 'x'.repeat(65) }, 'body.name: must be at most 64'],
      [`/persons/${personId}/credentials/totp`, { nmae: 'Phone' }, 'body.nmae: is not a member of this body'],
      [`/persons/${personId}/credentials/totp`, [], 'body: must be a JSON object'],
      [
        `/persons/${personId}/credentials/totp/nope/confirm`,
        { code: '123456' },
        'params.credential_id: must be a UUID',
      ],
      [
        `/persons/${personId}/credentials/totp/${credential_id}/confirm`,
        { code: 123456 },
        'body.code: must be a string',
      ],
      [
        `/persons/${personId}/credentials/totp/${credential_id}/confirm`,
        { code: '12345' },
        'body.code: must be the six-digit code',
      ],
      [`/persons/${personId}/credentials/totp/${credential_id}/confirm`, {}, 'body.code: is required'],
    ];
    for (const [path, body, message] of cases) {
      const res = await t.call('POST', path, body === undefined ? {} : { body });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
  });

  it('answers 404 for an unknown person and 409 for a person without a handle', async () => {
    const unknown = await t.enrol(crypto.randomUUID());
    await expectStatus(unknown, 404);
    const anonymous = await t.call('POST', '/persons/anonymous', { key: null });
    await expectStatus(anonymous, 201);
    const res = await t.enrol(anonymous.json.result.person_id);
    await expectStatus(res, 409);
    expect(res.json.errors[0].message).toContain('has no handle');
  });

  it('limits confirmation attempts per person with 429 and Retry-After', async () => {
    const personId = await t.addPerson();
    const { credential_id, secret } = (await t.enrol(personId)).json.result;
    const wrong = totpCode(secret, t.clock.now() + 10 * 60_000);
    for (let i = 0; i < 5; i++) await expectStatus(await t.confirm(personId, credential_id, wrong), 400);
    const limited = await t.confirm(personId, credential_id, totpCode(secret, t.clock.now()));
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    t.clock.advance(60_000);
    await expectStatus(await t.confirm(personId, credential_id, totpCode(secret, t.clock.now())), 200);
  });
});

describe('another organization', () => {
  it('reaches none of the persons or authenticators of this one', async () => {
    const personId = await t.addPerson();
    const { credentialId, secret } = await t.enrolled(personId);
    await expectStatus(await t.enrol(personId, t.asOther), 404);
    const pending = (await t.enrol(personId)).json.result;
    const code = totpCode(pending.secret, t.clock.now());
    await expectStatus(await t.confirm(personId, pending.credential_id, code, t.asOther), 404);
    await expectStatus(
      await t.call('POST', `/persons/${personId}/credentials/totp/${credentialId}/recovery-codes`, t.asOther),
      404,
    );
    // Its own person, naming this organization's credential: not found either.
    const theirs = await t.addPerson(t.asOther);
    await expectStatus(await t.confirm(theirs, pending.credential_id, code, t.asOther), 404);
    expect(await credentialsOf(personId, t.other.organization.id)).toEqual([]);
    const step = await t.secondStep(
      personId,
      { code: totpCode(secret, t.clock.now()) },
      { orgId: t.other.organization.id },
    );
    expect(step).toMatchObject({ ok: false, reason: 'not_enrolled' });
    // The code the hostile organization tried is still good here: it was never checked.
    expect(await t.secondStep(personId, { code: totpCode(secret, t.clock.now()) })).toMatchObject({
      ok: true,
    });
  });
});
