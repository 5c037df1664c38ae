import type { Clock } from './ports/clock.ts';

export interface TokenBucketOptions {
  /** Tokens a full bucket holds: the burst. @default 60 */
  capacity?: number;
  /** Tokens added per minute. @default 30 */
  perMinute?: number;
  /** Buckets kept at most; full ones are forgotten first. @default 10000 */
  maxKeys?: number;
  clock: Clock;
}

export type TakeResult = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key (an organization): each request takes one token, or `cost` tokens when it
 * weighs more (a test-events request takes one per event); tokens come back at
 * `perMinute` up to `capacity`. The buckets live in this process, so with several replicas behind a
 * load balancer an organization may get up to `replicas` times the rate: a bound against abuse of one
 * replica, not an exact global quota.
 *
 * @example
 * const buckets = createTokenBuckets({ clock, perMinute: 60, capacity: 20 });
 * const take = buckets.take(orgId);
 * if (!take.ok) throw CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': String(take.retryAfterSeconds) } })('...');
 */
export function createTokenBuckets(options: TokenBucketOptions) {
  const capacity = options.capacity ?? 60;
  const perMs = (options.perMinute ?? 30) / 60_000;
  const maxKeys = options.maxKeys ?? 10_000;
  const { clock } = options;
  const buckets = new Map<string, Bucket>();

  const level = (b: Bucket, now: number) => Math.min(capacity, b.tokens + (now - b.at) * perMs);

  /** Forgets buckets that have refilled: a full bucket and no bucket mean the same. */
  function sweep(now: number) {
    for (const [key, b] of buckets) if (level(b, now) >= capacity) buckets.delete(key);
    // Every bucket is busy: forget the oldest rather than grow without bound.
    if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
  }

  return {
    /** Takes `cost` tokens (at most `capacity`, or it never succeeds), or none and says when to retry. */
    take(key: string, cost = 1): TakeResult {
      const now = clock.now();
      let b = buckets.get(key);
      if (!b) {
        if (buckets.size >= maxKeys) sweep(now);
        b = { tokens: capacity, at: now };
        buckets.set(key, b);
      }
      b.tokens = level(b, now);
      b.at = now;
      if (b.tokens >= cost) {
        b.tokens -= cost;
        return { ok: true, remaining: Math.floor(b.tokens) };
      }
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((cost - b.tokens) / perMs / 1000)) };
    },
    get size() {
      return buckets.size;
    },
  };
}

export type TokenBuckets = ReturnType<typeof createTokenBuckets>;
