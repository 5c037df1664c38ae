import type { Clock } from '../ports/clock.ts';
import type { Storage } from '../ports/storage.ts';
import { createMemoryBuckets } from './memory.ts';
import { createSharedBuckets } from './postgres.ts';
import type { TokenBuckets } from './types.ts';

export { createMemoryBuckets } from './memory.ts';
export { createSharedBuckets, type SharedBucketOptions } from './postgres.ts';
export type { TakeResult, TokenBuckets } from './types.ts';

export interface TokenBucketOptions {
  /**
   * Names the limiter (`password-sign-in`): on Postgres its keys are stored as `name:key`, so two
   * limiters never share a bucket. Unique per limiter in the service.
   */
  name: string;
  /** Tokens a full bucket holds: the burst. @default 60 */
  capacity?: number;
  /** Tokens added per minute. @default 30 */
  perMinute?: number;
  /** Buckets kept at most in memory (PGlite); full ones are forgotten first. @default 10000 */
  maxKeys?: number;
  clock: Clock;
  /**
   * Where the buckets live: on Postgres, in the `rate_buckets` table shared by every replica (one
   * atomic statement per take); on PGlite or without storage, in this process.
   */
  storage?: Storage;
}

/**
 * Token buckets by key (an organization, a client address): each request takes one token, or `cost`
 * tokens when it weighs more (a test-events request takes one per event); tokens come back at
 * `perMinute` up to `capacity`. On Postgres every replica takes from the same buckets, so N replicas
 * allow each limit once; on PGlite (one process) they stay in memory, with no database round trip.
 *
 * @example
 * const buckets = createTokenBuckets({ name: 'jwks', clock, storage, perMinute: 60, capacity: 20 });
 * const take = await buckets.take(orgId);
 * if (!take.ok) throw CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': String(take.retryAfterSeconds) } })('...');
 */
export function createTokenBuckets(options: TokenBucketOptions): TokenBuckets {
  const shape = {
    capacity: options.capacity ?? 60,
    perMs: (options.perMinute ?? 30) / 60_000,
    clock: options.clock,
  };
  if (options.storage?.kind === 'postgres') {
    return createSharedBuckets({ ...shape, storage: options.storage, name: options.name });
  }
  return createMemoryBuckets({ ...shape, maxKeys: options.maxKeys ?? 10_000 });
}
