import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { createGroupCommit } from '../../../core/batching/group-commit.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { freshPglite } from '../../helpers/pglite.ts';
import { recordsABatchWhole } from './attempt-recorder.case.ts';

let storage: Storage;
beforeAll(async () => {
  storage = await freshPglite();
  await storage.query(sql`create table gc_items (n int primary key)`);
});
afterAll(async () => {
  await storage.close();
});

describe('group commit', () => {
  it('writes the items that arrive while a transaction runs in the next one, and answers each', async () => {
    const batches: number[][] = [];
    const gc = createGroupCommit<number, string>({
      storage,
      async write(tx, items) {
        batches.push(items);
        await tx.query(sql`insert into gc_items select unnest(${`{${items.join(',')}}`}::int[])`);
        return items.map((n) => `wrote ${n}`);
      },
    });
    const answers = await Promise.all(Array.from({ length: 100 }, (_, n) => gc.add(n)));
    expect(answers[42]).toBe('wrote 42');
    expect(batches.length).toBeLessThan(10);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, n) => n));
    const [{ count } = { count: 0 }] = await storage.query<{ count: number }>(
      sql`select count(*)::int as count from gc_items`,
    );
    expect(count).toBe(100);
  });

  it('fails only the item at fault when a batch fails, writing the others one by one', async () => {
    const gc = createGroupCommit<number>({
      storage,
      async write(tx, items) {
        await tx.query(sql`insert into gc_items select unnest(${`{${items.join(',')}}`}::int[])`);
        return items.map(() => undefined);
      },
    });
    // 5 is already there: the batch's insert fails; 1000 is then written alone.
    const results = await Promise.allSettled([gc.add(1000), gc.add(5)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    const rows = await storage.query(sql`select 1 from gc_items where n = 1000`);
    expect(rows).toHaveLength(1);
  });

  it('keeps a batch under its weight, and lets a heavy item go alone', async () => {
    const batches: number[][] = [];
    const gc = createGroupCommit<number>({
      storage,
      weigh: (n) => n,
      maxWeight: 10,
      async write(_tx, items) {
        batches.push(items);
        return items.map(() => undefined);
      },
    });
    await Promise.all([4, 4, 4, 50, 1].map((n) => gc.add(n)));
    expect(batches).toEqual([[4, 4], [4], [50], [1]]);
  });
});

describe('batch loader', () => {
  it('answers the keys asked for together with one load', async () => {
    const calls: string[][] = [];
    const loader = createBatchLoader(async (keys) => {
      calls.push(keys);
      return new Map(keys.filter((k) => k !== 'missing').map((k) => [k, k.toUpperCase()]));
    });
    const answers = await Promise.all(['a', 'b', 'a', 'missing'].map((k) => loader.load(k)));
    expect(answers).toEqual(['A', 'B', 'A', undefined]);
    expect(calls).toEqual([['a', 'b', 'missing']]);
  });
});

describe('retention', () => {
  it('forgets deliveries, their attempts and events older than the cutoff, and keeps the rest', async () => {
    const { sweepDeliveries } = await import('../../../plugins/webhooks/pipeline/retention.ts');
    const { uuidv7 } = await import('../../../core/ids.ts');
    const old = Date.parse('2026-01-01T00:00:00Z');
    const recent = old + 40 * 86_400_000;
    for (const [at, n] of [
      [old, 3],
      [recent, 2],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const id = uuidv7(at);
        const event = crypto.randomUUID();
        await storage.query(sql`insert into webhook_events (event_id, org_id, event_name, content, created_at)
          values (${event}, ${crypto.randomUUID()}, 'RoleCreated_v1', '{}', ${at})`);
        await storage.query(sql`insert into webhook_deliveries (id, org_id, webhook_id, event_id, source, trigger_type,
          trigger_name, status, attempts, created_at) values (${id}, ${crypto.randomUUID()}, ${crypto.randomUUID()},
          ${event}, ${id}, 'event', 'RoleCreated_v1', 'succeeded', 1, ${at})`);
        await storage.query(sql`insert into webhook_attempts (delivery_id, webhook_id, attempt, jti, started_at,
          latency_ms, ok, outcome) values (${id}, ${crypto.randomUUID()}, 1, ${crypto.randomUUID()}, ${at}, 1, true, 'succeeded')`);
      }
    }
    const swept = await sweepDeliveries(storage, old + 30 * 86_400_000);
    expect(swept).toEqual({ deliveries: 3, events: 3 });
    const count = async (table: string) =>
      (await storage.query<{ n: number }>(sql.raw(`select count(*)::int as n from ${table}`)))[0]!.n;
    expect(await count('webhook_deliveries')).toBe(2);
    expect(await count('webhook_attempts')).toBe(2);
    expect(await count('webhook_events')).toBe(2);
  });
});

describe('attempt recorder', () => {
  it('records a batch of hundreds whole: each delivery moves on, a settled one stays settled', () =>
    recordsABatchWhole(storage));
});
