import { pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * The GDPR consent levels a person has given, each with when it was first given. Keyed by person first:
 * the token issuer reads a person's levels by person ID alone; org_id still scopes every API read.
 */
export const consentsGdpr = pgTable(
  'consents_gdpr',
  {
    personId: uuid('person_id').notNull(),
    orgId: uuid('org_id').notNull(),
    consentLevel: text('consent_level').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.personId, t.orgId, t.consentLevel] })],
);
