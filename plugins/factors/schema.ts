import { index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import type { FirstFactor, SecondFactor } from '../../core/factors/policy.ts';
import type { TokenAuthentication } from '../../core/tokens/before-token-issued.ts';

/** What an organization set through PUT /organizations/authentication-policy, as stored. */
export interface StoredPolicy {
  firstFactors: FirstFactor[];
  secondFactor: 'off' | 'optional' | 'required';
  secondFactors: SecondFactor[];
  /** Absent: the relying party of the public base URL. */
  webauthn?: { rpId: string; rpName: string; origins: string[] };
}

/** An organization's authentication policy; an organization without a row has the default one. */
export const factorsPolicies = pgTable('factors_policies', {
  orgId: uuid('org_id').primaryKey(),
  policy: jsonb('policy').$type<StoredPolicy>().notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});

/**
 * The second step of sign-ins a first factor began: the SHA-256 digest of each mfa_token (never the
 * token), bound to the organization, the person and the first factor's authentication, with the second
 * factors it may be completed with. Single use (`used_at`), short-lived (`expires_at`).
 */
export const factorsMfaTokens = pgTable(
  'factors_mfa_tokens',
  {
    digest: text('digest').primaryKey(),
    orgId: uuid('org_id').notNull(),
    personId: text('person_id').notNull(),
    authentication: jsonb('authentication').$type<TokenAuthentication>().notNull(),
    methods: jsonb('methods').$type<SecondFactor[]>().notNull(),
    prevAnonymousPersonId: text('prev_anonymous_person_id'),
    /** Failed second-factor checks so far: past the limit the token is void. */
    failures: integer('failures').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [
    index('factors_mfa_tokens_person_idx').on(t.orgId, t.personId),
    index('factors_mfa_tokens_expires_idx').on(t.expiresAt),
  ],
);
