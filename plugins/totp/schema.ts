import { bigint, index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/**
 * TOTP authenticators of persons (RFC 6238: SHA-1, 6 digits, 30-second steps, what every authenticator
 * app reads). An enrolment is pending (`confirmed_at` null) until a code from the app confirms it, and
 * counts as a second factor only then; a pending one lapses at `expires_at`. A person holds at most one
 * confirmed authenticator: confirming a new one replaces it. `secret` is sealed by the SecretBox, bound
 * to the row (`totp-credential:<id>:secret`). `last_step` is the time step of the last code accepted:
 * a code is accepted only for a later step, so each is used once.
 */
export const totpCredentials = pgTable(
  'totp_credentials',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    personId: uuid('person_id').notNull(),
    name: text('name'),
    secret: text('secret').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    confirmedAt: timestamp('confirmed_at', { withTimezone: true }),
    lastStep: bigint('last_step', { mode: 'number' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
  },
  (t) => [index('totp_credentials_person_idx').on(t.orgId, t.personId)],
);

/**
 * The recovery codes of a confirmed authenticator: the SHA-256 digest of each (bound to the credential),
 * never the code. `used_at` is set when one is spent; each works once.
 */
export const totpRecoveryCodes = pgTable(
  'totp_recovery_codes',
  {
    credentialId: uuid('credential_id')
      .notNull()
      .references(() => totpCredentials.id, { onDelete: 'cascade' }),
    digest: text('digest').notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [primaryKey({ columns: [t.credentialId, t.digest] })],
);
