import { and, eq, inArray } from 'drizzle-orm';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { RoleErrors } from '../errors.ts';
import { publishTwins } from '../events.ts';
import { rolesPermissions, rolesRolePermissions, rolesRoles } from '../schema.ts';
import { compareNames, sortedUnique } from './name-order.ts';

export interface Permission {
  name: string;
  description: string;
}
export interface Role {
  name: string;
  description: string;
  /** Sorted names. */
  permissions: string[];
}

/** The names of `wanted` the organization has no permission of, locking those it has against deletion. */
export async function missingPermissions(db: Database, orgId: string, wanted: string[]): Promise<string[]> {
  if (wanted.length === 0) return [];
  // FOR SHARE: a concurrent DELETE /permissions/{name} waits for this transaction, so a permission seen
  // here is still there when the rows naming it are inserted.
  const found = await db
    .select({ name: rolesPermissions.name })
    .from(rolesPermissions)
    .where(and(eq(rolesPermissions.orgId, orgId), inArray(rolesPermissions.name, wanted)))
    .for('share');
  const have = new Set(found.map((r) => r.name));
  return wanted.filter((n) => !have.has(n));
}

/**
 * The organization's permissions and roles. Every change publishes its event and the `_InRegion_v1`
 * twin in its own transaction; a change that changes nothing publishes nothing.
 */
export function createRoleStore(deps: {
  storage: Storage;
  clock: Clock;
  events: EventPublisher;
  region: string;
}) {
  const { storage, clock, events, region } = deps;

  async function permissionsOfRole(db: Database, orgId: string, role: string): Promise<string[]> {
    const rows = await db
      .select({ name: rolesRolePermissions.permissionName })
      .from(rolesRolePermissions)
      .where(and(eq(rolesRolePermissions.orgId, orgId), eq(rolesRolePermissions.roleName, role)));
    return sortedUnique(rows.map((r) => r.name));
  }

  async function setRolePermissions(tx: Transaction, orgId: string, role: string, permissions: string[]) {
    const missing = await missingPermissions(tx.db, orgId, permissions);
    if (missing.length) throw RoleErrors.UNKNOWN_PERMISSIONS('body.permissions', missing);
    await tx.db
      .delete(rolesRolePermissions)
      .where(and(eq(rolesRolePermissions.orgId, orgId), eq(rolesRolePermissions.roleName, role)));
    if (permissions.length)
      await tx.db
        .insert(rolesRolePermissions)
        .values(permissions.map((permissionName) => ({ orgId, roleName: role, permissionName })));
  }

  /** The role's row, locked until the transaction ends (two PATCHes of one role take turns). */
  async function lockedRole(tx: Transaction, orgId: string, name: string) {
    const [row] = await tx.db
      .select({ description: rolesRoles.description })
      .from(rolesRoles)
      .where(and(eq(rolesRoles.orgId, orgId), eq(rolesRoles.name, name)))
      .for('update');
    if (!row) throw RoleErrors.ROLE_NOT_FOUND(name);
    return row;
  }

  return {
    async createPermission(orgId: string, p: Permission): Promise<Permission> {
      const now = new Date(clock.now());
      return storage.transaction(async (tx) => {
        const made = await tx.db
          .insert(rolesPermissions)
          .values({ orgId, name: p.name, description: p.description, createdAt: now, updatedAt: now })
          .onConflictDoNothing()
          .returning({ name: rolesPermissions.name });
        if (made.length === 0) throw RoleErrors.PERMISSION_EXISTS(p.name);
        await publishTwins(
          events,
          tx,
          orgId,
          'PermissionCreated',
          { permission_name: p.name, description: p.description },
          region,
        );
        return p;
      });
    },

    async listPermissions(orgId: string): Promise<Permission[]> {
      const rows = await storage.db
        .select({ name: rolesPermissions.name, description: rolesPermissions.description })
        .from(rolesPermissions)
        .where(eq(rolesPermissions.orgId, orgId));
      return rows.sort((a, b) => compareNames(a.name, b.name));
    },

    async getPermission(orgId: string, name: string): Promise<Permission> {
      const [row] = await storage.db
        .select({ name: rolesPermissions.name, description: rolesPermissions.description })
        .from(rolesPermissions)
        .where(and(eq(rolesPermissions.orgId, orgId), eq(rolesPermissions.name, name)));
      if (!row) throw RoleErrors.PERMISSION_NOT_FOUND(name);
      return row;
    },

    async updatePermission(
      orgId: string,
      name: string,
      change: { description?: string },
    ): Promise<Permission> {
      return storage.transaction(async (tx) => {
        const [row] = await tx.db
          .select({ description: rolesPermissions.description })
          .from(rolesPermissions)
          .where(and(eq(rolesPermissions.orgId, orgId), eq(rolesPermissions.name, name)))
          .for('update');
        if (!row) throw RoleErrors.PERMISSION_NOT_FOUND(name);
        const description = change.description ?? row.description;
        if (description === row.description) return { name, description };
        await tx.db
          .update(rolesPermissions)
          .set({ description, updatedAt: new Date(clock.now()) })
          .where(and(eq(rolesPermissions.orgId, orgId), eq(rolesPermissions.name, name)));
        await publishTwins(
          events,
          tx,
          orgId,
          'PermissionUpdated',
          { permission_name: name, description },
          region,
        );
        return { name, description };
      });
    },

    /** Deletes the permission; the foreign keys take it out of every role and person in the same statement. */
    async deletePermission(orgId: string, name: string): Promise<void> {
      await storage.transaction(async (tx) => {
        const gone = await tx.db
          .delete(rolesPermissions)
          .where(and(eq(rolesPermissions.orgId, orgId), eq(rolesPermissions.name, name)))
          .returning({ name: rolesPermissions.name });
        if (gone.length === 0) throw RoleErrors.PERMISSION_NOT_FOUND(name);
        await publishTwins(events, tx, orgId, 'PermissionDeleted', { permission_name: name }, region);
      });
    },

    async createRole(orgId: string, r: Role): Promise<Role> {
      const now = new Date(clock.now());
      const permissions = sortedUnique(r.permissions);
      return storage.transaction(async (tx) => {
        const made = await tx.db
          .insert(rolesRoles)
          .values({ orgId, name: r.name, description: r.description, createdAt: now, updatedAt: now })
          .onConflictDoNothing()
          .returning({ name: rolesRoles.name });
        if (made.length === 0) throw RoleErrors.ROLE_EXISTS(r.name);
        await setRolePermissions(tx, orgId, r.name, permissions);
        const role = { name: r.name, description: r.description, permissions };
        await publishTwins(
          events,
          tx,
          orgId,
          'RoleCreated',
          { role_name: role.name, description: role.description, permissions },
          region,
        );
        return role;
      });
    },

    async listRoles(orgId: string): Promise<Role[]> {
      const [roles, links] = await Promise.all([
        storage.db
          .select({ name: rolesRoles.name, description: rolesRoles.description })
          .from(rolesRoles)
          .where(eq(rolesRoles.orgId, orgId)),
        storage.db
          .select({ role: rolesRolePermissions.roleName, permission: rolesRolePermissions.permissionName })
          .from(rolesRolePermissions)
          .where(eq(rolesRolePermissions.orgId, orgId)),
      ]);
      const byRole = new Map<string, string[]>();
      for (const l of links) {
        const list = byRole.get(l.role);
        if (list) list.push(l.permission);
        else byRole.set(l.role, [l.permission]);
      }
      return roles
        .map((r) => ({ ...r, permissions: sortedUnique(byRole.get(r.name) ?? []) }))
        .sort((a, b) => compareNames(a.name, b.name));
    },

    async getRole(orgId: string, name: string): Promise<Role> {
      const [row] = await storage.db
        .select({ name: rolesRoles.name, description: rolesRoles.description })
        .from(rolesRoles)
        .where(and(eq(rolesRoles.orgId, orgId), eq(rolesRoles.name, name)));
      if (!row) throw RoleErrors.ROLE_NOT_FOUND(name);
      return { ...row, permissions: await permissionsOfRole(storage.db, orgId, name) };
    },

    async updateRole(
      orgId: string,
      name: string,
      change: { description?: string; permissions?: string[] },
    ): Promise<Role> {
      return storage.transaction(async (tx) => {
        const row = await lockedRole(tx, orgId, name);
        const old = await permissionsOfRole(tx.db, orgId, name);
        const description = change.description ?? row.description;
        const permissions = change.permissions ? sortedUnique(change.permissions) : old;
        const samePermissions =
          permissions.length === old.length && permissions.every((p, i) => p === old[i]);
        if (!samePermissions) await setRolePermissions(tx, orgId, name, permissions);
        const role = { name, description, permissions };
        if (samePermissions && description === row.description) return role;
        await tx.db
          .update(rolesRoles)
          .set({ description, updatedAt: new Date(clock.now()) })
          .where(and(eq(rolesRoles.orgId, orgId), eq(rolesRoles.name, name)));
        await publishTwins(
          events,
          tx,
          orgId,
          'RoleUpdated',
          { role_name: name, description, permissions },
          region,
        );
        return role;
      });
    },

    /** Deletes the role; the foreign keys take it from every person holding it in the same statement. */
    async deleteRole(orgId: string, name: string): Promise<void> {
      await storage.transaction(async (tx) => {
        const gone = await tx.db
          .delete(rolesRoles)
          .where(and(eq(rolesRoles.orgId, orgId), eq(rolesRoles.name, name)))
          .returning({ name: rolesRoles.name });
        if (gone.length === 0) throw RoleErrors.ROLE_NOT_FOUND(name);
        await publishTwins(events, tx, orgId, 'RoleDeleted', { role_name: name }, region);
      });
    },
  };
}

export type RoleStore = ReturnType<typeof createRoleStore>;
