import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import type { Storage } from '../../core/ports/storage.ts';
import {
  createTokenBuckets,
  type TokenBucketOptions,
  type TokenBuckets,
} from '../../core/rate-limit/index.ts';
import { manualClock } from '../helpers/clock.ts';

export interface RateLimitHarness {
  /** The storage of each replica: the same one twice where there is one process (PGlite). */
  replicas: readonly [Storage, Storage];
  cleanup(): Promise<void>;
}

/**
 * The token bucket contract, run on every storage: what one replica takes, the other cannot take
 * again. On PGlite the two "replicas" are one process with one set of buckets (made once per limiter),
 * on Postgres two pools that share the `rate_buckets` table.
 */
export function rateLimitContract(name: string, makeHarness: () => Promise<RateLimitHarness>) {
  describe(`Token buckets: ${name}`, () => {
    let h: RateLimitHarness;
    let clock: ReturnType<typeof manualClock>;
    let limiter: string;
    beforeEach(async () => {
      h = await makeHarness();
      limiter = `t${crypto.randomUUID().slice(0, 8)}`;
      clock = manualClock();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    /** The same limiter on each replica (one instance where both replicas are one storage). */
    function pair(
      options: Omit<TokenBucketOptions, 'clock' | 'storage' | 'name'>,
    ): [TokenBuckets, TokenBuckets] {
      const [a, b] = h.replicas;
      const first = createTokenBuckets({ ...options, name: limiter, clock, storage: a });
      return [first, a === b ? first : createTokenBuckets({ ...options, name: limiter, clock, storage: b })];
    }

    it('lets exactly the capacity through across both replicas, then refuses with Retry-After', async () => {
      const [a, b] = pair({ capacity: 5, perMinute: 6 });
      const takes = await Promise.all([a, b, a, b, a, b].map((r) => r.take('org')));
      expect(takes.filter((t) => t.ok)).toHaveLength(5);
      // Six a minute: the next token is back in 10 s.
      expect(takes.filter((t) => !t.ok)).toEqual([{ ok: false, retryAfterSeconds: 10 }]);
      expect(await b.take('org')).toEqual({ ok: false, retryAfterSeconds: 10 });
      // Another key has a bucket of its own.
      expect(await b.take('other')).toEqual({ ok: true, remaining: 4 });
    });

    it('refills as the clock moves, up to the capacity', async () => {
      const [a, b] = pair({ capacity: 5, perMinute: 6 });
      for (let i = 0; i < 5; i++) expect((await (i % 2 ? a : b).take('org')).ok).toBe(true);
      clock.advance(9_000);
      expect(await a.take('org')).toEqual({ ok: false, retryAfterSeconds: 1 });
      clock.advance(1_000);
      expect(await b.take('org')).toEqual({ ok: true, remaining: 0 });
      expect((await a.take('org')).ok).toBe(false);
      clock.advance(3_600_000);
      let n = 0;
      while ((await (n % 2 ? a : b).take('org')).ok) n++;
      expect(n).toBe(5);
    });

    it('takes a weighted cost whole or not at all', async () => {
      const [a, b] = pair({ capacity: 50, perMinute: 10 });
      expect(await a.take('org', 30)).toEqual({ ok: true, remaining: 20 });
      // One token short: back in 6 s at 10 a minute. A refusal takes nothing.
      expect(await b.take('org', 21)).toEqual({ ok: false, retryAfterSeconds: 6 });
      expect(await b.take('org', 20)).toEqual({ ok: true, remaining: 0 });
      // More than the capacity never succeeds, even on a full bucket.
      expect((await a.take('fresh', 51)).ok).toBe(false);
      expect(await a.take('fresh', 50)).toEqual({ ok: true, remaining: 0 });
    });

    it('keeps two limiters with the same keys apart', async () => {
      const [a] = pair({ capacity: 1 });
      const [other] = h.replicas;
      const b = createTokenBuckets({ name: `${limiter}-other`, clock, storage: other, capacity: 1 });
      expect((await a.take('org')).ok).toBe(true);
      expect((await a.take('org')).ok).toBe(false);
      expect((await b.take('org')).ok).toBe(true);
    });
  });
}
