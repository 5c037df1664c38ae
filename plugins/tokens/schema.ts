import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * One row per person that has been issued a token: the row's insert decides `first_token`, so two
 * issuances racing for a person's first token give `true` to exactly one of them.
 */
export const tokensIssuedPersons = pgTable(
  'tokens_issued_persons',
  {
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    firstIssuedAt: timestamp('first_issued_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.personId] })],
);

/** Revoked tokens by `jti`, kept until the token would have expired anyway. */
export const tokensRevoked = pgTable(
  'tokens_revoked',
  {
    jti: text('jti').primaryKey(),
    orgId: uuid('org_id').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('tokens_revoked_expires_idx').on(t.expiresAt)],
);

/**
 * Persons whose earlier tokens are revoked at once (a password reset): a token of the person issued
 * before `revoked_before` does not validate. One row per person, moved forward by each revocation.
 */
export const tokensPersonCutoffs = pgTable(
  'tokens_person_cutoffs',
  {
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    revokedBefore: timestamp('revoked_before', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.personId] })],
);
