import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { HANDLE_TYPES } from '../../core/capabilities/person-directory.ts';
import { UUID_PATTERN } from '../../core/ids.ts';

/**
 * One row per email sign-in challenge (POST /authenticate/email, POST /authenticate/mfa/email), stored
 * by the SHA-256 digest of its `challenge_id`, never the ID itself (the ID is what the caller holds to
 * finish the sign-in). `secret_digest` is the digest of what the message carried: for a code,
 * SHA-256 of `challenge_id:code` (so a database read alone cannot try the million codes), for a link,
 * SHA-256 of the link's 256-bit token. A challenge for a handle no active person holds is stored too,
 * and never sent: it refuses every code as a real one refuses a wrong code.
 */
export const emailChallenges = pgTable(
  'email_challenges',
  {
    challengeDigest: text('challenge_digest').primaryKey(),
    orgId: uuid('org_id').notNull(),
    /** `sign_in` (a first factor) or `second_factor` (the second step of a sign-in). */
    purpose: text('purpose').notNull(),
    /** `otp_via_email` or `email_link`. */
    method: text('method').notNull(),
    handleType: text('handle_type').notNull(),
    handleValue: text('handle_value').notNull(),
    /** Set once the message is queued: the person the handle named then. */
    personId: text('person_id'),
    secretDigest: text('secret_digest'),
    /** `requested`, `sent`, `confirmed` (a link's button pressed), `used` or `exhausted` (too many wrong codes). */
    status: text('status').notNull(),
    /** Wrong codes so far. */
    attempts: integer('attempts').notNull().default(0),
    /** Where the sign-in was asked from, shown on the link's page. */
    requestedIp: text('requested_ip'),
    requestedUserAgent: text('requested_user_agent'),
    /**
     * What the challenge is bound to, when a hosted login asked for it (the digest of that login's ID):
     * only that login may use it, and the API's routes refuse it. Null for the API's challenges.
     */
    boundTo: text('bound_to'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    settledAt: timestamp('settled_at', { withTimezone: true }),
  },
  (t) => [
    index('email_challenges_secret_idx').on(t.secretDigest),
    index('email_challenges_person_idx').on(t.orgId, t.personId),
    index('email_challenges_expires_idx').on(t.expiresAt),
  ],
);

export const EMAIL_METHODS = ['otp_via_email', 'email_link'] as const;
export type EmailMethod = (typeof EMAIL_METHODS)[number];

const challengeId = v.pipe(
  v.string('must be a string'),
  v.regex(UUID_PATTERN, 'must be the challenge_id POST /authenticate/email answered (a UUID)'),
);
/** Six decimal digits; spaces a person may type between them are ignored. */
export const CODE_RULE = 'must be the 6-digit code of the message';
const code = v.pipe(v.string('must be a string'), v.maxLength(32, CODE_RULE));

export const StartBody = v.object({
  handle: v.object({
    type: v.picklist(HANDLE_TYPES, `must be one of ${HANDLE_TYPES.join(', ')}`),
    value: v.pipe(
      v.string('must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(320, 'must be at most 320 characters'),
    ),
  }),
  method: v.picklist(EMAIL_METHODS, `must be one of ${EMAIL_METHODS.join(', ')}`),
});

export const VerifyBody = v.object({
  challenge_id: challengeId,
  /** The code of an otp_via_email message; absent when polling an email_link challenge. */
  code: v.optional(code),
});

export const MfaSendBody = v.object({
  mfa_token: v.pipe(v.string('must be a string'), v.minLength(1, 'must not be empty'), v.maxLength(512)),
});

export const ChallengeResult = v.object({
  result: v.object({ challenge_id: v.string(), expires_at: v.string() }),
});
