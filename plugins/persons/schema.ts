import { sql } from 'drizzle-orm';
import {
  boolean,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

/** One row per person of an organization. `person_id` is a UUID v7, so its order is creation order. */
export const persons = pgTable(
  'persons',
  {
    personId: uuid('person_id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    /** `regular`, or `anonymous` for a person made by createAnonymous. */
    personType: text('person_type').notNull(),
    active: boolean('active').notNull(),
    region: text('region').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [index('persons_org_person_idx').on(t.orgId, t.personId)],
);

/**
 * A person's handles, stored normalised. The unique index makes a handle belong to one person of an
 * organization even when two requests create it at once: one insert wins, the other gets 23505 (409).
 */
export const personHandles = pgTable(
  'persons_handles',
  {
    orgId: uuid('org_id').notNull(),
    personId: uuid('person_id').notNull(),
    type: text('type').notNull(),
    value: text('value').notNull(),
    /** Proven to reach the person: a verification link followed, an SSO provider's word, or the API's. */
    verified: boolean('verified').notNull().default(false),
  },
  (t) => [
    uniqueIndex('persons_handles_unique').on(t.orgId, t.type, t.value),
    index('persons_handles_person_idx').on(t.personId),
    foreignKey({ columns: [t.personId], foreignColumns: [persons.personId] }).onDelete('cascade'),
  ],
);

/** The groups an organization has named: made on first use, kept when emptied. */
export const personGroups = pgTable(
  'persons_groups',
  {
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/** Who is in which group. */
export const groupMemberships = pgTable(
  'persons_group_memberships',
  {
    orgId: uuid('org_id').notNull(),
    groupName: text('group_name').notNull(),
    personId: uuid('person_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.groupName, t.personId] }),
    index('persons_group_memberships_person_idx').on(t.personId),
    foreignKey({ columns: [t.personId], foreignColumns: [persons.personId] }).onDelete('cascade'),
    foreignKey({
      columns: [t.orgId, t.groupName],
      foreignColumns: [personGroups.orgId, personGroups.name],
    }).onDelete('cascade'),
  ],
);

/** An organization's persons settings; no row means the defaults. */
export const personSettings = pgTable('persons_settings', {
  orgId: uuid('org_id').primaryKey(),
  groupsClaimName: text('groups_claim_name').notNull().default(sql`'groups'`),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});

/**
 * Email verification links: the SHA-256 digest of each 256-bit token (never the token), the handle it
 * proves, until when, and whether it was used. They go with their person.
 */
export const personHandleVerifications = pgTable(
  'persons_handle_verifications',
  {
    digest: text('digest').primaryKey(),
    orgId: uuid('org_id').notNull(),
    personId: uuid('person_id').notNull(),
    handleType: text('handle_type').notNull(),
    handleValue: text('handle_value').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
  },
  (t) => [
    index('persons_handle_verifications_person_idx').on(t.personId),
    foreignKey({ columns: [t.personId], foreignColumns: [persons.personId] }).onDelete('cascade'),
  ],
);
