import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage } from '../../../core/ports/storage.ts';
import { PersonErrors } from '../errors.ts';
import { groupMemberships, personGroups, persons } from '../schema.ts';
import { findRows, getIn } from './person-records.ts';

/** Makes the named groups exist (first use creates them). */
export async function ensureGroups(db: Database, clock: Clock, orgId: string, names: string[]) {
  if (names.length === 0) return;
  const createdAt = new Date(clock.now());
  await db
    .insert(personGroups)
    .values(names.map((name) => ({ orgId, name, createdAt })))
    .onConflictDoNothing();
}

/** The person store's group operations: a person's groups, and a group's members. */
export function createGroupStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  return {
    /** Replaces the person's groups (groups are made on first use); answers the groups now held. */
    async setGroups(orgId: string, personId: string, groups: string[]): Promise<string[]> {
      return storage.transaction(async (tx) => {
        await getIn(tx.db, orgId, personId);
        await tx.db
          .delete(groupMemberships)
          .where(and(eq(groupMemberships.orgId, orgId), eq(groupMemberships.personId, personId)));
        await ensureGroups(tx.db, clock, orgId, groups);
        if (groups.length)
          await tx.db
            .insert(groupMemberships)
            .values(groups.map((groupName) => ({ orgId, groupName, personId })));
        return [...groups].sort();
      });
    },

    /** The IDs of a group's persons, in creation order; 404 for a group the organization never named. */
    async members(orgId: string, name: string): Promise<string[]> {
      const [group] = await storage.db
        .select({ name: personGroups.name })
        .from(personGroups)
        .where(and(eq(personGroups.orgId, orgId), eq(personGroups.name, name)));
      if (!group) throw PersonErrors.GROUP_NOT_FOUND(name);
      const rows = await storage.db
        .select({ personId: groupMemberships.personId })
        .from(groupMemberships)
        .where(and(eq(groupMemberships.orgId, orgId), eq(groupMemberships.groupName, name)))
        .orderBy(asc(groupMemberships.personId));
      return rows.map((r) => r.personId);
    },

    /** Adds persons to a group (made on first use); every person must be this organization's. */
    async addMembers(orgId: string, name: string, personIds: string[]): Promise<void> {
      await storage.transaction(async (tx) => {
        const found = await findRows(tx.db, orgId, inArray(persons.personId, personIds));
        const missing = personIds.find((id) => !found.some((r) => r.personId === id));
        if (missing) throw PersonErrors.PERSON_NOT_FOUND(missing);
        await ensureGroups(tx.db, clock, orgId, [name]);
        await tx.db
          .insert(groupMemberships)
          .values(personIds.map((personId) => ({ orgId, groupName: name, personId })))
          .onConflictDoNothing();
      });
    },

    async removeMember(orgId: string, name: string, personId: string): Promise<void> {
      const removed = await storage.db
        .delete(groupMemberships)
        .where(
          and(
            eq(groupMemberships.orgId, orgId),
            eq(groupMemberships.groupName, name),
            eq(groupMemberships.personId, personId),
          ),
        )
        .returning({ id: groupMemberships.personId });
      if (removed.length === 0) throw PersonErrors.NOT_A_MEMBER(personId, name);
    },
  };
}
