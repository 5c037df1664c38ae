import { index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** ES256 signing keys per organization. The private JWK is sealed by the SecretBox. */
export const signingKeys = pgTable(
  'signing_keys',
  {
    kid: text('kid').primaryKey(),
    orgId: uuid('org_id').notNull(),
    publicJwk: jsonb('public_jwk').notNull(),
    privateSealed: text('private_sealed').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    /** Set when a newer key replaced this one; the key stays published for the grace period after it. */
    retiredAt: timestamp('retired_at', { withTimezone: true }),
  },
  (t) => [index('signing_keys_org_idx').on(t.orgId, t.createdAt)],
);
