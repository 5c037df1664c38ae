import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createMemoryBuckets, createTokenBuckets } from '../../core/rate-limit/index.ts';
import { manualClock } from '../helpers/clock.ts';
import { freshPglite } from '../helpers/pglite.ts';

describe('the token bucket in memory', () => {
  it('allows bursts of 60, then 30 a minute, with a Retry-After', async () => {
    const clock = manualClock();
    const buckets = createTokenBuckets({ name: 'test', clock, capacity: 60, perMinute: 30 });
    for (let i = 0; i < 60; i++) expect((await buckets.take('org')).ok).toBe(true);
    expect(await buckets.take('org')).toEqual({ ok: false, retryAfterSeconds: 2 });
    expect((await buckets.take('other')).ok).toBe(true);
    clock.advance(2000);
    expect((await buckets.take('org')).ok).toBe(true);
    expect((await buckets.take('org')).ok).toBe(false);
    clock.advance(60_000);
    let n = 0;
    while ((await buckets.take('org')).ok) n++;
    expect(n).toBe(30);
  });

  it('takes one token per event of a weighted request, and says when enough are back', async () => {
    const clock = manualClock();
    const buckets = createTokenBuckets({ name: 'test', clock, capacity: 50, perMinute: 10 });
    expect(await buckets.take('org', 30)).toEqual({ ok: true, remaining: 20 });
    // One token short: back in 6 s at 10 a minute. A refusal takes nothing.
    expect(await buckets.take('org', 21)).toEqual({ ok: false, retryAfterSeconds: 6 });
    expect(await buckets.take('org', 20)).toEqual({ ok: true, remaining: 0 });
    expect(await buckets.take('org', 5)).toEqual({ ok: false, retryAfterSeconds: 30 });
    clock.advance(30_000);
    expect(await buckets.take('org', 5)).toEqual({ ok: true, remaining: 0 });
  });

  it('forgets full buckets rather than grow without bound', async () => {
    const clock = manualClock();
    const buckets = createMemoryBuckets({ clock, capacity: 60, perMs: 30 / 60_000, maxKeys: 100 });
    for (let i = 0; i < 1000; i++) await buckets.take(`org-${i}`);
    expect(buckets.size).toBeLessThanOrEqual(100);
  });

  it('never refills backwards when the clock steps back', async () => {
    const clock = manualClock();
    const buckets = createTokenBuckets({ name: 'test', clock, capacity: 2, perMinute: 60 });
    await buckets.take('org');
    await buckets.take('org');
    clock.advance(-10_000);
    expect(await buckets.take('org')).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it('stays in memory on PGlite: a take touches no table', async () => {
    const storage = await freshPglite();
    try {
      const buckets = createTokenBuckets({ name: 'test', clock: manualClock(), storage, capacity: 1 });
      expect((await buckets.take('org')).ok).toBe(true);
      expect((await buckets.take('org')).ok).toBe(false);
      const rows = await storage.query<{ n: number }>(sql`select count(*)::int as n from rate_buckets`);
      expect(rows[0]?.n).toBe(0);
    } finally {
      await storage.close();
    }
  });
});
