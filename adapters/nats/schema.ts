import { bigint, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The transactional outbox: a message published inside a Storage transaction is written here with
 * the state change, and the relay moves it to JetStream after commit (Nats-Msg-Id de-duplicates a
 * relay that crashed between publishing and deleting).
 */
export const busOutbox = pgTable('bus_outbox', {
  seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  topic: text('topic').notNull(),
  msgId: text('msg_id').notNull(),
  payload: jsonb('payload').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
