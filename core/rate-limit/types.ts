import type { Clock } from '../ports/clock.ts';

export type TakeResult = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

/** A set of token buckets by key: in memory (PGlite) or shared by every replica (Postgres). */
export interface TokenBuckets {
  /**
   * Takes `cost` tokens (at most the capacity, or it never succeeds), or none and says when to retry.
   * @default cost 1
   */
  take(key: string, cost?: number): Promise<TakeResult>;
}

/** What every implementation needs: the capacity, the refill per millisecond and the clock. */
export interface BucketShape {
  capacity: number;
  perMs: number;
  clock: Clock;
}
