import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const organizations = pgTable('organizations', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** API keys are 256-bit random values; only their SHA-256 digest (hex) is stored. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id')
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    digest: text('digest').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Null: valid until revoked. A rotation with a grace period sets it in the future. */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('api_keys_org_idx').on(t.orgId)],
);

// Core's migration set is generated from this file: every table core owns is reachable from here.
export { rateBuckets } from '../rate-limit/schema.ts';
