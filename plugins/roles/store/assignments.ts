import { and, eq, inArray, sql } from 'drizzle-orm';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { type IfMatch, requireIfMatch, strongEtag } from '../../../core/http/etag.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { RoleErrors } from '../errors.ts';
import { publishTwins } from '../events.ts';
import { rolesPersonPermissions, rolesPersonRoles, rolesRolePermissions, rolesRoles } from '../schema.ts';
import { sortedUnique } from './name-order.ts';
import { missingPermissions } from './roles.ts';

/**
 * Serialises the writes about one person: two PUTs take turns (each event's old list is what the other
 * left), and a person's deletion (beforePersonDeleted) waits for a PUT in flight, then deletes its rows.
 */
export const lockPerson = (tx: Transaction, personId: string) =>
  tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`roles:${personId}`}, 0))`);

/**
 * The strong ETag of a person's roles or additional permissions: of the sorted names, exactly what
 * the GET answers in `result`.
 */
export const namesEtag = (names: readonly string[]) => strongEtag(names);

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

async function readRoles(db: Database, orgId: string, personId: string): Promise<string[]> {
  const rows = await db
    .select({ name: rolesPersonRoles.roleName })
    .from(rolesPersonRoles)
    .where(and(eq(rolesPersonRoles.personId, personId), eq(rolesPersonRoles.orgId, orgId)));
  return sortedUnique(rows.map((r) => r.name));
}

async function readAdditionalPermissions(db: Database, orgId: string, personId: string): Promise<string[]> {
  const rows = await db
    .select({ name: rolesPersonPermissions.permissionName })
    .from(rolesPersonPermissions)
    .where(and(eq(rolesPersonPermissions.personId, personId), eq(rolesPersonPermissions.orgId, orgId)));
  return sortedUnique(rows.map((r) => r.name));
}

/** The names of `wanted` the organization has no role of, locking those it has against deletion. */
async function missingRoles(db: Database, orgId: string, wanted: string[]): Promise<string[]> {
  if (wanted.length === 0) return [];
  const found = await db
    .select({ name: rolesRoles.name })
    .from(rolesRoles)
    .where(and(eq(rolesRoles.orgId, orgId), inArray(rolesRoles.name, wanted)))
    .for('share');
  const have = new Set(found.map((r) => r.name));
  return wanted.filter((n) => !have.has(n));
}

/** Deletes every row about the person (its roles and additional permissions). */
export async function forgetPerson(tx: Transaction, orgId: string, personId: string): Promise<void> {
  await lockPerson(tx, personId);
  await tx.db
    .delete(rolesPersonRoles)
    .where(and(eq(rolesPersonRoles.personId, personId), eq(rolesPersonRoles.orgId, orgId)));
  await tx.db
    .delete(rolesPersonPermissions)
    .where(and(eq(rolesPersonPermissions.personId, personId), eq(rolesPersonPermissions.orgId, orgId)));
}

/** A person's roles and additional permissions, and its effective permissions. */
export function createAssignments(deps: {
  storage: Storage;
  events: EventPublisher;
  persons: PersonDirectory;
}) {
  const { storage, events, persons } = deps;

  /** The person's region (the `_InRegion` events' `region`); 404 for no person of this organization. */
  async function readRegion(orgId: string, personId: string): Promise<string> {
    const person = await persons.get(orgId, personId);
    if (!person) throw RoleErrors.PERSON_NOT_FOUND(personId);
    return person.region;
  }

  /**
   * Runs a write about a person that exists, read under the person's lock in the write's transaction: a
   * deletion takes that lock too (beforePersonDeleted), so one that committed first is seen here (a 404,
   * no event), and one that comes later waits for this write and then deletes its rows.
   */
  async function aboutPerson(
    orgId: string,
    personId: string,
    write: (tx: Transaction, region: string) => Promise<void>,
  ) {
    await storage.transaction(async (tx) => {
      await lockPerson(tx, personId);
      const person = await persons.get(orgId, personId, { tx });
      if (!person) throw RoleErrors.PERSON_NOT_FOUND(personId);
      await write(tx, person.region);
    });
  }

  return {
    async roles(orgId: string, personId: string): Promise<string[]> {
      await readRegion(orgId, personId);
      return readRoles(storage.db, orgId, personId);
    },

    async additionalPermissions(orgId: string, personId: string): Promise<string[]> {
      await readRegion(orgId, personId);
      return readAdditionalPermissions(storage.db, orgId, personId);
    },

    /** The permissions of the person's roles and its additional ones, sorted. */
    async effectivePermissions(orgId: string, personId: string): Promise<string[]> {
      await readRegion(orgId, personId);
      const [fromRoles, additional] = await Promise.all([
        storage.db
          .select({ name: rolesRolePermissions.permissionName })
          .from(rolesPersonRoles)
          .innerJoin(
            rolesRolePermissions,
            and(
              eq(rolesRolePermissions.orgId, rolesPersonRoles.orgId),
              eq(rolesRolePermissions.roleName, rolesPersonRoles.roleName),
            ),
          )
          .where(and(eq(rolesPersonRoles.personId, personId), eq(rolesPersonRoles.orgId, orgId))),
        readAdditionalPermissions(storage.db, orgId, personId),
      ]);
      return sortedUnique([...fromRoles.map((r) => r.name), ...additional]);
    },

    /**
     * Replaces the person's roles; every role must exist (400 naming those that do not). With
     * `ifMatch`, the roles are compared under the person's lock, where every write about the person
     * waits its turn: a 412 writes nothing, and no write slips in between the check and this one.
     * Answers the roles now held.
     */
    async setRoles(orgId: string, personId: string, wanted: string[], ifMatch?: IfMatch): Promise<string[]> {
      const roles = sortedUnique(wanted);
      await aboutPerson(orgId, personId, async (tx, region) => {
        const old = await readRoles(tx.db, orgId, personId);
        requireIfMatch(ifMatch, await namesEtag(old), `the person's roles`);
        const missing = await missingRoles(tx.db, orgId, roles);
        if (missing.length) throw RoleErrors.UNKNOWN_ROLES('body.roles', missing);
        if (sameList(old, roles)) return;
        await tx.db
          .delete(rolesPersonRoles)
          .where(and(eq(rolesPersonRoles.personId, personId), eq(rolesPersonRoles.orgId, orgId)));
        if (roles.length)
          await tx.db
            .insert(rolesPersonRoles)
            .values(roles.map((roleName) => ({ personId, orgId, roleName })));
        await publishTwins(
          events,
          tx,
          orgId,
          'RolesSetToPerson',
          { new_roles: roles, old_roles: old, person_id: personId },
          region,
        );
      });
      return roles;
    },

    /** Replaces the person's additional permissions; every permission must exist. `ifMatch` as setRoles. */
    async setAdditionalPermissions(
      orgId: string,
      personId: string,
      wanted: string[],
      ifMatch?: IfMatch,
    ): Promise<string[]> {
      const permissions = sortedUnique(wanted);
      await aboutPerson(orgId, personId, async (tx, region) => {
        const old = await readAdditionalPermissions(tx.db, orgId, personId);
        requireIfMatch(ifMatch, await namesEtag(old), `the person's additional permissions`);
        const missing = await missingPermissions(tx.db, orgId, permissions);
        if (missing.length) throw RoleErrors.UNKNOWN_PERMISSIONS('body.permissions', missing);
        if (sameList(old, permissions)) return;
        await tx.db
          .delete(rolesPersonPermissions)
          .where(and(eq(rolesPersonPermissions.personId, personId), eq(rolesPersonPermissions.orgId, orgId)));
        if (permissions.length)
          await tx.db
            .insert(rolesPersonPermissions)
            .values(permissions.map((permissionName) => ({ personId, orgId, permissionName })));
        await publishTwins(
          events,
          tx,
          orgId,
          'PermissionsSetToPerson',
          { new_permissions: permissions, old_permissions: old, person_id: personId },
          region,
        );
      });
      return permissions;
    },
  };
}

export type Assignments = ReturnType<typeof createAssignments>;
