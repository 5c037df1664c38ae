import { expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrate } from '../../core/db/migrate.ts';
import { migrations as coreMigrations } from '../../core/organizations/migrations/index.ts';
import { createSharedBuckets } from '../../core/rate-limit/index.ts';
import { rateLimitContract } from '../contract/rate-limit.contract.ts';
import { manualClock } from '../helpers/clock.ts';
import { isolatedPostgres } from './support.ts';

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
