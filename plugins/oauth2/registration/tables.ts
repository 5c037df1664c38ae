import { bigint, boolean, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { oauth2Clients } from '../schema.ts';

/**
 * Initial access tokens (RFC 7591 §3): issued by an organization's administrator, each good for a number
 * of registrations until it expires. Only the SHA-256 digest (hex) of the token is kept; a registration
 * takes one use in a single conditional UPDATE, so two registrations racing for the last use get one
 * success. A revoked token's row is deleted.
 */
export const oauth2RegistrationTokens = pgTable(
  'oauth2_registration_tokens',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    tokenDigest: text('token_digest').notNull().unique(),
    /** Registrations it was issued for. */
    uses: integer('uses').notNull(),
    /** Registrations it may still make. */
    usesLeft: integer('uses_left').notNull(),
    /** Milliseconds since the epoch. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('oauth2_registration_tokens_org_idx').on(t.orgId, t.id)],
);

export type RegistrationTokenRow = typeof oauth2RegistrationTokens.$inferSelect;

/**
 * Clients made by dynamic registration: the digest of their registration access token (RFC 7592), and
 * whether they came by open registration (those count against the organization's max_open_clients).
 * The row goes with its client, however the client is deleted.
 */
export const oauth2RegisteredClients = pgTable(
  'oauth2_registered_clients',
  {
    clientId: uuid('client_id')
      .primaryKey()
      .references(() => oauth2Clients.clientId, { onDelete: 'cascade' }),
    orgId: uuid('org_id').notNull(),
    accessTokenDigest: text('access_token_digest').notNull().unique(),
    open: boolean('open').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('oauth2_registered_clients_open_idx').on(t.orgId, t.open)],
);

/** An organization's dynamic registration policy, as PUT /oauth2/registration-policy stored it. */
export interface StoredRegistrationPolicy {
  open_registration: boolean;
  max_open_clients: number;
  per_address_per_hour: number;
  allowed_scopes: string[];
}

/** One row per organization that set a policy; without one, open registration is off. */
export const oauth2RegistrationPolicies = pgTable('oauth2_registration_policies', {
  orgId: uuid('org_id').primaryKey(),
  policy: jsonb('policy').$type<StoredRegistrationPolicy>().notNull(),
  updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
});
