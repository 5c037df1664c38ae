import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { deletePersonCredential, personCredentials } from '../../../core/factors/credentials.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type TotpTestService, totpCode, totpService } from './fixture.ts';

let t: TotpTestService;
beforeAll(async () => {
  t = await totpService();
});
afterAll(() => t.stop());

const now = () => t.clock.now();

describe('the second step with a TOTP code', () => {
  it("accepts the app's code for the person, as a totp authentication with the person's handle", async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const outcome = await t.secondStep(personId, { code: totpCode(secret, now()) });
    expect(outcome).toEqual({
      ok: true,
      authentication: {
        handle: { type: 'email_address', value: expect.stringMatching(/^person-\d+@example\.com$/) },
        method: 'totp',
        timestamp: new Date(now()).toISOString(),
      },
    });
    const [listed] = (await t.service.ctx.hooks.run(personCredentials, { orgId: t.org.id, personId })).flat();
    expect(listed?.lastUsedAt).toBe(now());
  });

  it('accepts each code once, and no code of an earlier step after a later one', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const code = totpCode(secret, now());
    expect(await t.secondStep(personId, { code })).toMatchObject({ ok: true });
    expect(await t.secondStep(personId, { code })).toEqual({
      ok: false,
      reason: 'invalid',
      detail: 'code: was used already (each code signs in once)',
    });
    // The next step's code (one step of drift ahead) is good; the current step's is then used up.
    expect(await t.secondStep(personId, { code: totpCode(secret, now() + 30_000) })).toMatchObject({
      ok: true,
    });
    t.clock.advance(30_000);
    expect(await t.secondStep(personId, { code: totpCode(secret, now() - 30_000) })).toMatchObject({
      ok: false,
      reason: 'invalid',
    });
  });

  it('gives one success to two requests racing with the same code', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const code = totpCode(secret, now());
    const outcomes = await Promise.all([
      t.secondStep(personId, { code }),
      t.secondStep(personId, { code }),
      t.secondStep(personId, { code }),
    ]);
    expect(outcomes.filter((o) => o?.ok)).toHaveLength(1);
  });

  it('takes one step of drift either way, not two', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    for (const offset of [-60_000, 60_000, 90_000])
      expect(await t.secondStep(personId, { code: totpCode(secret, now() + offset) })).toMatchObject({
        ok: false,
        reason: 'invalid',
      });
    // The step before now was the confirming code's: one more step on, the step behind is unused.
    t.clock.advance(30_000);
    expect(await t.secondStep(personId, { code: totpCode(secret, now() - 30_000) })).toMatchObject({
      ok: true,
    });
  });

  it('accepts a recovery code in place of a code, once, typed in any case and without dashes', async () => {
    const personId = await t.addPerson();
    const { recoveryCodes } = await t.enrolled(personId);
    const [first, second] = recoveryCodes;
    expect(await t.secondStep(personId, { code: first })).toMatchObject({ ok: true });
    expect(await t.secondStep(personId, { code: first })).toMatchObject({
      ok: false,
      reason: 'invalid',
      detail: 'code: is not a recovery code of this authenticator, or was spent already',
    });
    const typed = ` ${second!.replaceAll('-', '').toUpperCase()} `;
    expect(await t.secondStep(personId, { code: typed })).toMatchObject({ ok: true });
    const [row] = await t.service.ctx.storage.query<{ left: number }>(
      sql`select count(*)::int as left from totp_recovery_codes where used_at is null and credential_id in
            (select id from totp_credentials where person_id = ${personId})`,
    );
    expect(row?.left).toBe(8);
    // Another person's recovery code is not this person's.
    const other = await t.addPerson();
    const theirs = await t.enrolled(other);
    expect(await t.secondStep(personId, { code: theirs.recoveryCodes[0] })).toMatchObject({ ok: false });
    expect(await t.secondStep(other, { code: theirs.recoveryCodes[0] })).toMatchObject({ ok: true });
  });

  it('answers not_enrolled for a person without a confirmed authenticator', async () => {
    const personId = await t.addPerson();
    const code = '123456';
    expect(await t.secondStep(personId, { code })).toMatchObject({ ok: false, reason: 'not_enrolled' });
    expect(await t.secondStep('not-a-person', { code })).toMatchObject({ ok: false, reason: 'not_enrolled' });
    const { secret } = (await t.enrol(personId)).json.result;
    // A pending enrolment is no second factor: its code does not complete a sign-in.
    expect(await t.secondStep(personId, { code: totpCode(secret, now()) })).toMatchObject({
      ok: false,
      reason: 'not_enrolled',
    });
  });

  it('refuses a code that is not a string, not six digits and not a recovery code, naming code', async () => {
    const personId = await t.addPerson();
    await t.enrolled(personId);
    for (const input of [
      {},
      { code: 123456 },
      { code: '12345' },
      { code: 'x'.repeat(65) },
      { code: 'not-a-code' },
    ])
      expect(await t.secondStep(personId, input)).toMatchObject({
        ok: false,
        reason: 'invalid',
        detail: expect.stringMatching(/^code: must be/),
      });
  });

  it('limits attempts per person and per address, with a time to retry', async () => {
    const personId = await t.addPerson();
    const { secret } = await t.enrolled(personId);
    const wrong = totpCode(secret, now() + 10 * 60_000);
    // The confirmation took one attempt of the person's five.
    for (let i = 0; i < 4; i++)
      expect(await t.secondStep(personId, { code: wrong })).toMatchObject({ ok: false, reason: 'invalid' });
    const limited = await t.secondStep(personId, { code: totpCode(secret, now()) });
    expect(limited).toMatchObject({ ok: false, reason: 'rate_limited', retryAfter: expect.any(Number) });
    t.clock.advance(60_000);
    expect(await t.secondStep(personId, { code: totpCode(secret, now()) })).toMatchObject({ ok: true });

    // One address spraying many persons is stopped by its own limit (100 a burst).
    const clientIp = '203.0.113.9';
    const persons = await Promise.all(Array.from({ length: 26 }, () => t.addPerson()));
    let refused: unknown;
    for (const id of persons) {
      for (let i = 0; i < 4; i++) {
        const outcome = await t.secondStep(id, { code: '000000' }, { clientIp });
        if (outcome?.ok === false && outcome.reason === 'rate_limited') refused ??= outcome;
      }
    }
    expect(refused).toMatchObject({ detail: 'too many code attempts from this address' });
  });
});

describe("deleting a person's authenticator", () => {
  it("deletes it through the credentials hook, in the caller's transaction, for its own person only", async () => {
    const personId = await t.addPerson();
    const { credentialId, secret } = await t.enrolled(personId);
    const remove = (o: { orgId?: string; personId?: string; credentialId?: string }) =>
      t.service.ctx.storage.transaction(async (tx) =>
        (
          await t.service.ctx.hooks.run(deletePersonCredential, {
            orgId: o.orgId ?? t.org.id,
            personId: o.personId ?? personId,
            credentialId: o.credentialId ?? credentialId,
            tx,
          })
        ).filter((x) => x !== undefined),
      );
    expect(await remove({ orgId: t.other.organization.id })).toEqual([]);
    expect(await remove({ personId: await t.addPerson() })).toEqual([]);
    expect(await remove({ credentialId: 'password' })).toEqual([]);
    expect(await remove({})).toEqual([
      expect.objectContaining({ credentialId, type: 'totp', secondFactor: true }),
    ]);
    expect(await t.secondStep(personId, { code: totpCode(secret, now()) })).toMatchObject({
      reason: 'not_enrolled',
    });
    const [codes] = await t.service.ctx.storage.query<{ n: number }>(
      sql`select count(*)::int as n from totp_recovery_codes where credential_id = ${credentialId}`,
    );
    expect(codes?.n).toBe(0);
  });

  it('deletes every authenticator of a deleted person, and their recovery codes', async () => {
    const personId = await t.addPerson();
    const { credentialId } = await t.enrolled(personId);
    await expectStatus(await t.enrol(personId), 201);
    await expectStatus(await t.call('DELETE', `/persons/${personId}`), 204);
    const [rows] = await t.service.ctx.storage.query<{ n: number; codes: number }>(
      sql`select (select count(*)::int from totp_credentials where person_id = ${personId}) as n,
                 (select count(*)::int from totp_recovery_codes where credential_id = ${credentialId}) as codes`,
    );
    expect(rows).toEqual({ n: 0, codes: 0 });
  });
});
