import { expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { migrate } from '../../core/db/migrate.ts';
import { migrations as coreMigrations } from '../../core/organizations/migrations/index.ts';
import { createSharedBuckets } from '../../core/rate-limit/index.ts';
import { rateLimitContract } from '../contract/rate-limit.contract.ts';
import { manualClock } from '../helpers/clock.ts';
import { DATABASE_URL, isolatedPostgres } from './support.ts';

// Two pools on one schema, as two replicas on one Postgres.
rateLimitContract('Postgres, two replicas', async () => {
  const pg = await isolatedPostgres('limits');
  await migrate(pg.storage, [coreMigrations]);
  const other = await pg.another();
  return {
    replicas: [pg.storage, other],
    cleanup: async () => {
      await other.close();
      await pg.storage.close();
      await pg.drop();
    },
  };
});

it('sweeps the full buckets of its own limiter only, a bounded batch at a time', async () => {
  const pg = await isolatedPostgres('limits');
  try {
    await migrate(pg.storage, [coreMigrations]);
    const clock = manualClock();
    const shape = { storage: pg.storage, clock, capacity: 2, perMs: 1 / 1000, sweepBatch: 3 };
    const mine = createSharedBuckets({ ...shape, name: 'mine' });
    const theirs = createSharedBuckets({ ...shape, name: 'theirs', capacity: 1000 });
    for (let i = 0; i < 5; i++) await mine.take(`k${i}`);
    await theirs.take('k0');
    // Not yet full: nothing goes.
    expect(await mine.sweep()).toBe(0);
    clock.advance(1_000);
    expect(await mine.sweep()).toBe(3);
    expect(await mine.sweep()).toBe(2);
    const rows = await pg.storage.query<{ key: string }>(sql`select key from rate_buckets`);
    expect(rows.map((r) => r.key)).toEqual(['theirs:k0']);
    // A swept bucket is a full one.
    expect(await mine.take('k0')).toEqual({ ok: true, remaining: 1 });
  } finally {
    await pg.storage.close();
    await pg.drop();
  }
});

it('leaves the connection committing synchronously after a take, whose own commit does not wait', async () => {
  const pg = await isolatedPostgres('limits');
  // One connection: whatever a take sets on it, the next statements see.
  const one = await createPostgresStorage({ url: DATABASE_URL, schema: pg.schema, max: 1 });
  try {
    await migrate(pg.storage, [coreMigrations]);
    const buckets = createSharedBuckets({
      storage: one,
      name: 'async',
      clock: manualClock(),
      capacity: 5,
      perMs: 1 / 1000,
    });
    for (let i = 0; i < 3; i++) expect((await buckets.take('k')).ok).toBe(true);
    const setting = async () =>
      (await one.query<{ synchronous_commit: string }>(sql`show synchronous_commit`))[0]!.synchronous_commit;
    expect(await setting()).toBe('on');
    await one.transaction(async (tx) => {
      expect(
        (await tx.query<{ synchronous_commit: string }>(sql`show synchronous_commit`))[0]!.synchronous_commit,
      ).toBe('on');
    });
    // Taken and kept: the row holds what is left.
    const rows = await one.query<{ tokens: number }>(
      sql`select tokens from rate_buckets where key = 'async:k'`,
    );
    expect(Number(rows[0]!.tokens)).toBe(2);
  } finally {
    await one.close();
    await pg.storage.close();
    await pg.drop();
  }
});
