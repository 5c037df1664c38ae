import { bigint, doublePrecision, pgTable, text } from 'drizzle-orm/pg-core';

/**
 * Token buckets shared by every replica on Postgres (PGlite keeps them in memory). `key` is the
 * limiter's name and the caller's key (`password-sign-in:<org>|<address>`); `tokens` is the level at
 * `at` (epoch milliseconds of the service clock), refilled on read. No row means a full bucket.
 */
export const rateBuckets = pgTable('rate_buckets', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  at: bigint('at', { mode: 'number' }).notNull(),
});
