import { afterEach, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { codeFactor } from './code-factor.ts';
import { type FactorsService, factorsService } from './fixture.ts';
import { raceLastTwoFirstFactors } from './last-factor-race.ts';

let svc: FactorsService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const ADA = { type: 'email_address' as const, value: 'ada@example.com' };

async function setUp() {
  const totp = codeFactor('totp');
  const passkeys = codeFactor('webauthn');
  svc = await factorsService({ extra: [totp.plugin, passkeys.plugin] });
  const ada = await svc.addPerson([ADA]);
  return { s: svc, totp, passkeys, ada };
}

const credentials = (s: FactorsService, personId: string, o = {}) =>
  s.call('GET', `/persons/${personId}/credentials`, o);
const remove = (s: FactorsService, personId: string, credentialId: string, query = '', o = {}) =>
  s.call('DELETE', `/persons/${personId}/credentials/${credentialId}${query}`, o);

describe('GET /persons/{id}/credentials', () => {
  it("lists every factor plugin's credentials of the person, oldest first, without secrets", async () => {
    const { s, totp, passkeys, ada } = await setUp();
    s.clock.advance(1000);
    const code = totp.enrol(s.org.id, ada.personId, '111111');
    s.clock.advance(1000);
    const key = passkeys.enrol(s.org.id, ada.personId, '222222', { firstFactor: true, name: 'laptop' });
    const res = await credentials(s, ada.personId);
    await expectStatus(res, 200);
    const at = (ms: number) => new Date(ms).toISOString();
    const now = s.clock.now();
    expect(res.json.result).toEqual([
      { credential_id: 'password', type: 'password', created_at: expect.any(String) },
      { credential_id: code, type: 'totp', created_at: at(now - 1000), last_used_at: at(now - 1000) },
      { credential_id: key, type: 'webauthn', name: 'laptop', created_at: at(now), last_used_at: at(now) },
    ]);
    expect(Date.parse(res.json.result[0].created_at)).toBe(now - 2000);
    expect(res.text).not.toContain('111111');
    expect(res.text).not.toContain('argon2');
  });

  it('answers 404 for a person of another organization, whose credentials stay hidden', async () => {
    const { s, ada } = await setUp();
    const hostile = await s.otherOrg();
    const res = await credentials(s, ada.personId, hostile);
    await expectStatus(res, 404);
    expect(res.json.errors[0].message).toContain(`no person ${ada.personId}`);
    await expectStatus(await remove(s, ada.personId, 'password', '?force=true', hostile), 404);
    await expectStatus(await credentials(s, ada.personId, { key: hostile.key }), 403);
    expect((await credentials(s, ada.personId)).json.result).toHaveLength(1);
  });
});

describe('DELETE /persons/{id}/credentials/{credential_id}', () => {
  it('keeps the last first factor the policy allows with 409 unless forced', async () => {
    const { s, ada } = await setUp();
    const kept = await remove(s, ada.personId, 'password');
    await expectStatus(kept, 409);
    expect(kept.json.errors[0].message).toContain(
      "credential password (password) is the person's last first factor the policy allows",
    );
    expect(kept.json.errors[0].message).toContain('?force=true');
    await expectStatus(await s.signIn(ADA), 200);

    const bad = await remove(s, ada.personId, 'password', '?force=yes');
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toContain('force: must be true or false');

    await expectStatus(await remove(s, ada.personId, 'password', '?force=true'), 204);
    expect((await credentials(s, ada.personId)).json.result).toEqual([]);
    await expectStatus(await s.signIn(ADA), 401);
    await expectStatus(await remove(s, ada.personId, 'password', '?force=true'), 404);
  });

  it('deletes a first factor when another one the policy allows remains, and counts only allowed ones', async () => {
    const { s, passkeys, totp, ada } = await setUp();
    const key = passkeys.enrol(s.org.id, ada.personId, '1', { firstFactor: true });
    const code = totp.enrol(s.org.id, ada.personId, '2');
    // A second factor is never the last first factor.
    await expectStatus(await remove(s, ada.personId, code), 204);
    // The policy allows passwords only: the passkey does not count as a way in.
    await s.setPolicy({ first_factors: ['password'], second_factor: 'off' });
    await expectStatus(await remove(s, ada.personId, 'password'), 409);
    // Allowed again, the passkey lets the password go, and is then the last one itself.
    await s.setPolicy({ first_factors: ['password', 'webauthn'], second_factor: 'off' });
    await expectStatus(await remove(s, ada.personId, 'password'), 204);
    const last = await remove(s, ada.personId, key);
    await expectStatus(last, 409);
    expect(last.json.errors[0].message).toContain(`credential ${key} (webauthn)`);
    const listed = (await credentials(s, ada.personId)).json.result;
    expect(listed.map((c: { credential_id: string }) => c.credential_id)).toEqual([key]);
  });

  it('keeps one of the last two first factors when both are deleted at once: one 204, one 409', async () => {
    svc = await factorsService();
    await raceLastTwoFirstFactors({
      first: svc.call,
      second: svc.call,
      storage: svc.service.ctx.storage,
      orgId: svc.org.id,
    });
  });

  it("answers 404 for a credential the person does not have, another person's included", async () => {
    const { s, passkeys, ada } = await setUp();
    const bob = await s.addPerson([{ type: 'username', value: 'bob' }]);
    const bobs = passkeys.enrol(s.org.id, bob.personId, '1', { firstFactor: true });
    const res = await remove(s, ada.personId, bobs, '?force=true');
    await expectStatus(res, 404);
    expect(res.json.errors[0].message).toBe(`the person has no credential ${bobs}`);
    expect((await credentials(s, bob.personId)).json.result).toHaveLength(2);
  });
});
