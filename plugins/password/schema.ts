import { index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { HANDLE_TYPES } from '../../core/capabilities/person-directory.ts';

/**
 * One row per person with a password: its hash (argon2id, or an imported bcrypt or argon2id hash until
 * the first sign-in rehashes it). Never logged, never returned.
 */
export const passwordCredentials = pgTable(
  'password_credentials',
  {
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    hash: text('hash').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.personId] })],
);

/**
 * Password reset links: the SHA-256 digest of each 256-bit token (never the token), the person and the
 * handle it went to, and its state. `open` until used, superseded by a newer reset, or voided by a
 * password change; past `expires_at` an open token is expired. `request_id` makes a redelivered
 * request issue no second token.
 */
export const passwordResetTokens = pgTable(
  'password_reset_tokens',
  {
    digest: text('digest').primaryKey(),
    requestId: uuid('request_id').notNull().unique(),
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    handleType: text('handle_type').notNull(),
    handleValue: text('handle_value').notNull(),
    /** `open`, `used`, `superseded` or `password_changed`. */
    status: text('status').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    settledAt: timestamp('settled_at', { withTimezone: true }),
  },
  (t) => [
    index('password_reset_tokens_person_idx').on(t.orgId, t.personId),
    index('password_reset_tokens_expires_idx').on(t.expiresAt),
  ],
);

/** An organization's reset settings: its own reset page, when it has one. */
export const passwordResetSettings = pgTable('password_reset_settings', {
  orgId: uuid('org_id').primaryKey(),
  resetUrl: text('reset_url'),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});

const handleType = v.picklist(HANDLE_TYPES, `must be one of ${HANDLE_TYPES.join(', ')}`);

export const SetPasswordBody = v.object({
  password: v.optional(v.string('must be a string')),
  password_hash: v.optional(
    v.pipe(v.string('must be a string'), v.maxLength(1024, 'must be at most 1024 characters')),
  ),
});

export const PersonParams = v.object({ person_id: v.pipe(v.string(), v.maxLength(128)) });

export const AuthenticateBody = v.object({
  handle: v.object({
    type: handleType,
    value: v.pipe(
      v.string('must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(320, 'must be at most 320 characters'),
    ),
  }),
  // Bounded here (4 bytes a code point) so that no hash is spent on a body the policy could never set.
  password: v.pipe(v.string('must be a string'), v.maxLength(1024, 'must be at most 1024 characters')),
  /** The token of the anonymous person this sign-in follows, to carry prev_anonymous_person_id. */
  anonymous_token: v.optional(v.pipe(v.string('must be a string'), v.maxLength(8192))),
});

export const SignInResult = v.object({
  result: v.union([
    v.object({ token: v.string(), person_id: v.string() }),
    v.pipe(
      v.object({
        person_id: v.string(),
        mfa_required: v.literal(true),
        mfa_token: v.pipe(
          v.string(),
          v.description('Names this sign-in for POST /authenticate/mfa: short-lived, single use.'),
        ),
        methods: v.pipe(
          v.array(v.string()),
          v.description('The second factors the person may complete it with.'),
        ),
      }),
      v.description("The organization's policy asks for a second factor: no token yet."),
    ),
  ]),
});
export const AnonymousResult = v.object({ result: v.object({ person_id: v.string(), token: v.string() }) });
