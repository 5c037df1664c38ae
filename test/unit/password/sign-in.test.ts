import { afterEach, describe, expect, it } from 'bun:test';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hashSync as makeBcryptHash } from '@node-rs/bcrypt';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
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

async function withPerson(env: Record<string, string> = {}) {
  svc = await passwordService({ env });
  const person = await svc.addPerson([EMAIL]);
  return { s: svc, person };
}

const storedHash = async (s: Svc, personId: string) =>
  (
    await s.service.ctx.storage.query<{ hash: string }>(
      sql`select hash from password_credentials where person_id = ${personId}`,
    )
  )[0]?.hash;

describe('POST /authenticate/password', () => {
  it('signs in with the password set by the API and answers a token for the person', async () => {
    const { s, person } = await withPerson();
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const res = await s.signIn({
      handle: { type: 'email_address', value: 'Ada@Example.com' },
      password: GOOD,
    });
    await expectStatus(res, 200);
    expect(res.json.result.person_id).toBe(person.personId);
    expect(await s.validate(res.json.result.token)).toMatchObject({ valid: true });
    expect(decodeJwt(res.json.result.token)).toMatchObject({
      person_id: person.personId,
      authenticated_methods: ['password'],
    });
    expect(res.text).not.toContain('argon2');
  });

  it('answers one 401 body for a wrong password, an unknown handle and a disabled person', async () => {
    const { s, person } = await withPerson();
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const disabled = await s.addPerson([{ type: 'username', value: 'off' }], { active: false });
    await expectStatus(await s.setPassword(disabled.personId, { password: GOOD }), 204);
    const wrong = await s.signIn({ handle: EMAIL, password: 'not the password' });
    const unknown = await s.signIn({
      handle: { type: 'email_address', value: 'x@example.com' },
      password: GOOD,
    });
    const off = await s.signIn({ handle: { type: 'username', value: 'off' }, password: GOOD });
    for (const res of [wrong, unknown, off]) await expectStatus(res, 401);
    expect(unknown.text).toBe(wrong.text);
    expect(off.text).toBe(wrong.text);
    const failed = await s.eventsNamed('AuthenticationFailed_v1', 3);
    expect(failed.map((e) => e.failure_reason).sort()).toEqual([
      'invalid_credentials',
      'person_disabled',
      'unknown_handle',
    ]);
    // Only the disabled person had authenticated (its password matched): it alone is named.
    const named = Object.fromEntries(
      failed.map((e) => [e.failure_reason, [e.person_id, e.region, e.authenticated_methods]]),
    );
    expect(named).toEqual({
      invalid_credentials: [undefined, undefined, undefined],
      unknown_handle: [undefined, undefined, undefined],
      person_disabled: [disabled.personId, 'us-iowa', ['password']],
    });
  });

  it('spends a hash on an unknown handle as on a wrong password', async () => {
    const { s, person } = await withPerson();
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const time = async (value: string) => {
      const t0 = performance.now();
      await s.signIn({ handle: { type: 'email_address', value }, password: 'nope nope' });
      return performance.now() - t0;
    };
    // Warmed up, then taken in turns and compared by median: a pause of the machine's (a collection,
    // another process) lands on one attempt, not on all of one kind. Once the first five known
    // attempts ran while the process was still warming up, at twice the time of the unknown ones.
    await time(EMAIL.value);
    await time('nobody@example.com');
    const known: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 7; i++) {
      known.push(await time(EMAIL.value));
      unknown.push(await time('nobody@example.com'));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    // Without the dummy hash the unknown handle answers in well under a millisecond of hashing.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
  });

  it('answers 429 with Retry-After past the attempts allowed for a handle', async () => {
    const { s } = await withPerson({ PASSWORD_HANDLE_RATE_LIMIT: '1/3' });
    for (let i = 0; i < 3; i++)
      await expectStatus(await s.signIn({ handle: EMAIL, password: 'wrong one' }), 401);
    const res = await s.signIn({ handle: EMAIL, password: 'wrong one' });
    await expectStatus(res, 429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another handle from the same address still gets its answer.
    await expectStatus(await s.signIn({ handle: { type: 'username', value: 'other' }, password: 'x' }), 401);
    expect(
      (await s.eventsNamed('AuthenticationFailed_v1', 5)).some(
        (e) => e.failure_reason === 'too_many_attempts',
      ),
    ).toBe(true);
  });

  it('answers 429 past the attempts allowed for a client address', async () => {
    const { s } = await withPerson({ PASSWORD_ADDRESS_RATE_LIMIT: '1/2' });
    const from = (ip: string, value: string) =>
      s.signIn({ handle: { type: 'username', value }, password: 'x' }, { 'x-forwarded-for': ip });
    await expectStatus(await from('198.51.100.7', 'a'), 401);
    await expectStatus(await from('198.51.100.7', 'b'), 401);
    await expectStatus(await from('198.51.100.7', 'c'), 429);
    await expectStatus(await from('203.0.113.9', 'c'), 401);
    // IPv6: one /64 is one client, whichever of its addresses it steps through; another /64 is another.
    await expectStatus(await from('2001:db8:0:1::1', 'd'), 401);
    await expectStatus(await from('2001:db8:0:1::2', 'e'), 401);
    await expectStatus(await from('2001:db8:0:1:ffff::3', 'f'), 429);
    await expectStatus(await from('2001:db8:0:2::1', 'f'), 401);
  });

  it('verifies imported bcrypt and argon2id hashes and rehashes them to argon2id', async () => {
    const { s, person } = await withPerson();
    const other = await s.addPerson([{ type: 'username', value: 'grace' }]);
    const bcryptHash = makeBcryptHash(GOOD, 4).replace(/^\$2b\$/, '$2y$');
    const oldArgon = await argon2Hash(GOOD, { algorithm: 2, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    await expectStatus(await s.setPassword(person.personId, { password_hash: bcryptHash }), 204);
    await expectStatus(await s.setPassword(other.personId, { password_hash: oldArgon }), 204);
    await expectStatus(await s.signIn({ handle: EMAIL, password: 'wrong password' }), 401);
    expect(await storedHash(s, person.personId)).toBe(bcryptHash);
    await expectStatus(await s.signIn({ handle: EMAIL, password: GOOD }), 200);
    await expectStatus(await s.signIn({ handle: { type: 'username', value: 'grace' }, password: GOOD }), 200);
    for (const id of [person.personId, other.personId])
      expect(await storedHash(s, id)).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$');
    await expectStatus(await s.signIn({ handle: EMAIL, password: GOOD }), 200);
  });

  it('links a sign-in to the anonymous person whose token it presents', async () => {
    const { s, person } = await withPerson();
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const anon = await s.call('POST', '/persons/anonymous', { key: null });
    await expectStatus(anon, 201);
    expect((await s.eventsNamed('AnonymousTokenMinted_v1')).at(-1)).toMatchObject({
      person_id: anon.json.result.person_id,
    });
    const res = await s.signIn({ handle: EMAIL, password: GOOD, anonymous_token: anon.json.result.token });
    await expectStatus(res, 200);
    expect((await s.eventsNamed('TokenMinted_v1', 1)).at(-1)).toMatchObject({
      person_id: person.personId,
      prev_anonymous_person_id: anon.json.result.person_id,
    });
    // A regular person's token links nothing.
    await expectStatus(
      await s.signIn({ handle: EMAIL, password: GOOD, anonymous_token: res.json.result.token }),
      200,
    );
    const minted = await s.eventsNamed('TokenMinted_v1', 2);
    expect(minted).toHaveLength(2);
    expect(minted.at(-1)?.prev_anonymous_person_id).toBeUndefined();
  });

  it('rate-limits anonymous persons per client address', async () => {
    svc = await passwordService({ env: { ANONYMOUS_RATE_LIMIT: '1/2' } });
    const anon = (ip: string) =>
      svc!.call('POST', '/persons/anonymous', { key: null, headers: { 'x-forwarded-for': ip } });
    await expectStatus(await anon('198.51.100.1'), 201);
    await expectStatus(await anon('198.51.100.1'), 201);
    const res = await anon('198.51.100.1');
    await expectStatus(res, 429);
    expect(res.headers.get('retry-after')).toBeTruthy();
    await expectStatus(await anon('198.51.100.2'), 201);
  });

  it("keeps organizations apart: another organization's person is 404 and its handles unknown", async () => {
    const { s, person } = await withPerson();
    await expectStatus(await s.setPassword(person.personId, { password: GOOD }), 204);
    const other = await s.service.ctx.orgs.create('Other');
    const foreign = await s.call('PUT', `/persons/${person.personId}/credentials/password`, {
      body: { password: GOOD },
      orgId: other.organization.id,
      key: other.apiKey,
    });
    await expectStatus(foreign, 404);
    const res = await s.signIn({ handle: EMAIL, password: GOOD }, {});
    await expectStatus(res, 200);
    const cross = await s.call('POST', '/authenticate/password', {
      body: { handle: EMAIL, password: GOOD },
      orgId: other.organization.id,
      key: null,
    });
    await expectStatus(cross, 401);
  });
});
