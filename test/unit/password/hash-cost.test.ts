import { afterEach, describe, expect, it } from 'bun:test';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hashSync as makeBcryptHash } from '@node-rs/bcrypt';
import { sql } from 'drizzle-orm';
import { createLogger } from '../../../core/log.ts';
import { HASH_LIMITS } from '../../../plugins/password/hashing/hash-cost.ts';
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

// Real hashes made cheaply, whose parameters are then rewritten: the import checks the parameters only,
// and a sign-in that verified a rewritten one at cost 31 would not end within the test's time.
const bcryptAt = (cost: number) =>
  makeBcryptHash(GOOD, 4).replace(/^\$2b\$04\$/, `$2b$${String(cost).padStart(2, '0')}$`);
const cheapArgon = await argon2Hash(GOOD, { algorithm: 2, memoryCost: 1024, timeCost: 1, parallelism: 1 });
const argonWith = (params: string, salt?: string, hash?: string) => {
  const [, , , , s, h] = cheapArgon.split('$');
  return `$argon2id$v=19$${params}$${salt ?? s}$${hash ?? h}`;
};

describe('the cost limits of imported password hashes', () => {
  it('refuses with 400 a hash over a limit, naming password_hash, the parameter and the limit', async () => {
    svc = await passwordService();
    const p = await svc.addPerson([EMAIL]);
    const cases: [string, string][] = [
      [bcryptAt(31), 'password_hash: bcrypt cost must be 4 to 13 (got 31)'],
      [bcryptAt(14), 'password_hash: bcrypt cost must be 4 to 13 (got 14)'],
      [bcryptAt(3), 'password_hash: bcrypt cost must be 4 to 13 (got 3)'],
      [
        argonWith('m=9999999,t=9999,p=999'),
        'password_hash: argon2id parallelism p must be 1 to 16 (got 999)',
      ],
      [
        argonWith('m=9999999,t=2,p=1'),
        'password_hash: argon2id memory m (KiB) must be 8 to 131072 (got 9999999)',
      ],
      [argonWith('m=65536,t=9999,p=1'), 'password_hash: argon2id iterations t must be 1 to 10 (got 9999)'],
      [
        argonWith('m=131072,t=5,p=1'),
        'password_hash: argon2id memory × iterations (m × t) must be at most 524288',
      ],
      [argonWith('m=8,t=1,p=4'), 'password_hash: argon2id memory m (KiB) must be 32 to 131072 (got 8)'],
      [argonWith('m=1024,t=0,p=1'), 'password_hash: argon2id iterations t must be 1 to 10 (got 0)'],
      [
        argonWith('m=1024,t=1,p=1', 'c2FsdA'),
        'password_hash: argon2id salt length (bytes) must be 8 to 64 (got 4)',
      ],
      [
        argonWith('m=1024,t=1,p=1', undefined, 'A'.repeat(400)),
        'argon2id hash length (bytes) must be 16 to 64',
      ],
      [
        cheapArgon.replace('$argon2id$', '$argon2i$'),
        'argon2i, argon2d and argon2 version 16 are not accepted',
      ],
      [
        cheapArgon.replace('$argon2id$', '$argon2d$'),
        'argon2i, argon2d and argon2 version 16 are not accepted',
      ],
      [cheapArgon.replace('$v=19$', '$v=16$'), 'argon2i, argon2d and argon2 version 16 are not accepted'],
    ];
    for (const [hash, message] of cases) {
      const res = await svc.setPassword(p.personId, { password_hash: hash });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
  });

  it('accepts hashes at the limits and the defaults of common exporters', async () => {
    svc = await passwordService();
    const p = await svc.addPerson([EMAIL]);
    const L = HASH_LIMITS;
    for (const hash of [
      bcryptAt(L.bcryptCost),
      bcryptAt(10),
      argonWith(`m=${L.argon2MemoryKiB},t=${L.argon2Work / L.argon2MemoryKiB},p=${L.argon2Parallelism}`),
      argonWith(`m=8,t=${L.argon2Iterations},p=1`),
      argonWith('m=65536,t=3,p=4'), // argon2-cffi, node-argon2, RFC 9106's second choice
      argonWith('m=65536,t=4,p=1'), // PHP's PASSWORD_ARGON2ID
      argonWith('m=102400,t=2,p=8'), // Django
      argonWith('m=47104,t=1,p=1'), // OWASP
    ])
      await expectStatus(await svc.setPassword(p.personId, { password_hash: hash }), 204);
  });

  it('refuses a costly hash stored before the limits as wrong credentials, unverified, and logs it', async () => {
    const lines: string[] = [];
    const log = createLogger('info', {}, (line) => lines.push(line));
    svc = await passwordService({ log });
    const p = await svc.addPerson([EMAIL]);
    // As an earlier version accepted it: verifying it would take 2^31 bcrypt rounds, days on one core.
    await svc.service.ctx.storage.query(
      sql`insert into password_credentials (org_id, person_id, hash, updated_at)
          values (${svc.org.id}, ${p.personId}, ${bcryptAt(31)}, now())`,
    );
    const started = performance.now();
    const res = await svc.signIn({ handle: EMAIL, password: GOOD });
    await expectStatus(res, 401);
    expect(performance.now() - started).toBeLessThan(5000);
    const [failed] = await svc.eventsNamed('AuthenticationFailed_v1');
    expect(failed).toMatchObject({
      failure_reason: 'invalid_credentials',
      failure_detail: 'the stored hash was not verified: password_hash: bcrypt cost must be 4 to 13 (got 31)',
    });
    const warned = lines
      .map((l) => JSON.parse(l))
      .find((l) => l.msg.startsWith('stored password hash refused'));
    expect(warned).toMatchObject({ level: 'warn', org_id: svc.org.id, person_id: p.personId });
    // A new password set by the API (or a reset link) lets the person in again.
    await expectStatus(await svc.setPassword(p.personId, { password: GOOD }), 204);
    await expectStatus(await svc.signIn({ handle: EMAIL, password: GOOD }), 200);
  });

  it('raises the limits to the service own argon2id parameters', async () => {
    svc = await passwordService({
      env: { PASSWORD_ARGON2_MEMORY_KIB: '1024', PASSWORD_ARGON2_ITERATIONS: '12' },
    });
    const p = await svc.addPerson([EMAIL]);
    await expectStatus(await svc.setPassword(p.personId, { password: GOOD }), 204);
    await expectStatus(await svc.signIn({ handle: EMAIL, password: GOOD }), 200);
    const own = await argon2Hash(GOOD, { algorithm: 2, memoryCost: 1024, timeCost: 12, parallelism: 1 });
    await expectStatus(await svc.setPassword(p.personId, { password_hash: own }), 204);
    await expectStatus(await svc.signIn({ handle: EMAIL, password: GOOD }), 200);
    const over = argonWith('m=1024,t=13,p=1');
    const res = await svc.setPassword(p.personId, { password_hash: over });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toContain('argon2id iterations t must be 1 to 12 (got 13)');
  });
});
