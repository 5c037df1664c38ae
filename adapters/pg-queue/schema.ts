import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * The queue: one row per message not yet acknowledged. Times are milliseconds on the service's Clock,
 * so tests on a fast clock see delays shrink consistently.
 */
export const busMessages = pgTable(
  'bus_messages',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    topic: text('topic').notNull(),
    msgId: text('msg_id').notNull(),
    payload: jsonb('payload').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Claimable when at or before the clock's now; a claim moves it forward by the lease. */
    availableAt: bigint('available_at', { mode: 'number' }).notNull(),
    leaseToken: uuid('lease_token'),
    publishedAt: bigint('published_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    index('bus_messages_claim_idx').on(t.topic, t.availableAt, t.seq),
    uniqueIndex('bus_messages_msg_id_idx').on(t.topic, t.msgId),
  ],
);
