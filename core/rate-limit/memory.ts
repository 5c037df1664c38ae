import type { BucketShape, TakeResult, TokenBuckets } from './types.ts';

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets in this process: for PGlite (one process) and for tests. No database round trip.
 * `maxKeys` bounds the map: full buckets are forgotten first, then the oldest.
 */
export function createMemoryBuckets(shape: BucketShape & { maxKeys: number }): TokenBuckets & {
  readonly size: number;
} {
  const { capacity, perMs, maxKeys, clock } = shape;
  const buckets = new Map<string, Bucket>();

  const level = (b: Bucket, now: number) => Math.min(capacity, b.tokens + Math.max(0, now - b.at) * perMs);

  /** Forgets buckets that have refilled: a full bucket and no bucket mean the same. */
  function sweep(now: number) {
    for (const [key, b] of buckets) if (level(b, now) >= capacity) buckets.delete(key);
    // Every bucket is busy: forget the oldest rather than grow without bound.
    if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
  }

  function takeNow(key: string, cost: number): TakeResult {
    const now = clock.now();
    let b = buckets.get(key);
    if (!b) {
      if (buckets.size >= maxKeys) sweep(now);
      b = { tokens: capacity, at: now };
      buckets.set(key, b);
    }
    b.tokens = level(b, now);
    b.at = Math.max(b.at, now);
    if (b.tokens >= cost) {
      b.tokens -= cost;
      return { ok: true, remaining: Math.floor(b.tokens) };
    }
    return { ok: false, retryAfterSeconds: retryAfter(cost, b.tokens, perMs) };
  }

  return {
    take: async (key, cost = 1) => takeNow(key, cost),
    get size() {
      return buckets.size;
    },
  };
}

/** Whole seconds until `cost` tokens are back from `level`, at least one. */
export const retryAfter = (cost: number, level: number, perMs: number): number =>
  Math.max(1, Math.ceil((cost - level) / perMs / 1000));
