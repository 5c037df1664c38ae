import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The transactional outbox: a message published inside a Storage transaction is written here with
 * the state change. After commit the committing process hands it to a consumer of its own or publishes
 * it to JetStream, then deletes it; the relay moves rows whose `due_at` has passed (left by a crashed
 * process, or waiting out a retry). Nats-Msg-Id de-duplicates a relay that crashed between publishing
 * and deleting.
 */
export const busOutbox = pgTable(
  'bus_outbox',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    topic: text('topic').notNull(),
    msgId: text('msg_id').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** When the relay may move the row: until then it is the committing process's (or a retry's delay). */
    dueAt: timestamp('due_at', { withTimezone: true }).notNull().defaultNow(),
    /** Attempts a consumer of this process made before the row went back to the relay. */
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [index('bus_outbox_due_idx').on(t.dueAt, t.seq)],
);
