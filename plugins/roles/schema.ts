import { boolean, foreignKey, index, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** An organization's permissions, by name. */
export const rolesPermissions = pgTable(
  'roles_permissions',
  {
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/** An organization's roles, by name. */
export const rolesRoles = pgTable(
  'roles_roles',
  {
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

/**
 * The permissions of each role. The foreign keys cascade, so deleting a permission or a role takes its
 * rows here with it in the deleting statement, hence in its transaction.
 */
export const rolesRolePermissions = pgTable(
  'roles_role_permissions',
  {
    orgId: uuid('org_id').notNull(),
    roleName: text('role_name').notNull(),
    permissionName: text('permission_name').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.orgId, t.roleName, t.permissionName] }),
    index('roles_role_permissions_permission_idx').on(t.orgId, t.permissionName),
    foreignKey({ columns: [t.orgId, t.roleName], foreignColumns: [rolesRoles.orgId, rolesRoles.name] })
      .onDelete('cascade')
      .onUpdate('cascade'),
    foreignKey({
      columns: [t.orgId, t.permissionName],
      foreignColumns: [rolesPermissions.orgId, rolesPermissions.name],
    })
      .onDelete('cascade')
      .onUpdate('cascade'),
  ],
);

/**
 * A person's roles. Keyed by person first: the token issuer reads a person's roles by person ID alone
 * (many persons of many organizations in one query); the org_id column still scopes every API read.
 */
export const rolesPersonRoles = pgTable(
  'roles_person_roles',
  {
    personId: uuid('person_id').notNull(),
    orgId: uuid('org_id').notNull(),
    roleName: text('role_name').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.personId, t.orgId, t.roleName] }),
    index('roles_person_roles_role_idx').on(t.orgId, t.roleName),
    foreignKey({ columns: [t.orgId, t.roleName], foreignColumns: [rolesRoles.orgId, rolesRoles.name] })
      .onDelete('cascade')
      .onUpdate('cascade'),
  ],
);

/** A person's additional permissions: granted directly, beside those of its roles. */
export const rolesPersonPermissions = pgTable(
  'roles_person_permissions',
  {
    personId: uuid('person_id').notNull(),
    orgId: uuid('org_id').notNull(),
    permissionName: text('permission_name').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.personId, t.orgId, t.permissionName] }),
    index('roles_person_permissions_permission_idx').on(t.orgId, t.permissionName),
    foreignKey({
      columns: [t.orgId, t.permissionName],
      foreignColumns: [rolesPermissions.orgId, rolesPermissions.name],
    })
      .onDelete('cascade')
      .onUpdate('cascade'),
  ],
);

/** An organization's roles settings; no row means the defaults. */
export const rolesSettings = pgTable('roles_settings', {
  orgId: uuid('org_id').primaryKey(),
  /** Whether identity tokens carry the person's roles under `roles`. */
  rolesInTokens: boolean('roles_in_tokens').notNull().default(false),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
});
