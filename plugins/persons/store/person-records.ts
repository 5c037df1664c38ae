import { and, asc, eq, inArray, type SQL } from 'drizzle-orm';
import {
  eventHandle,
  type HeldHandle,
  type PersonHandle,
  type PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { Database } from '../../../core/ports/storage.ts';
import { PersonErrors } from '../errors.ts';
import { groupMemberships, personHandles, persons } from '../schema.ts';

export type PersonRow = typeof persons.$inferSelect;

export const eventHandles = (handles: PersonHandle[]) => handles.map(eventHandle);

/** The rows as PersonRecords, with their handles and groups, in the rows' order. */
export async function readRecords(
  db: Database,
  rows: PersonRow[],
  read = { handles: true, groups: true },
): Promise<PersonRecord[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.personId);
  // A list that leaves handles or groups out of its answer does not read them.
  const [handles, groups] = await Promise.all([
    read.handles ? db.select().from(personHandles).where(inArray(personHandles.personId, ids)) : [],
    read.groups
      ? db
          .select()
          .from(groupMemberships)
          .where(inArray(groupMemberships.personId, ids))
          .orderBy(asc(groupMemberships.groupName))
      : [],
  ]);
  return rows.map((r) => ({
    personId: r.personId,
    orgId: r.orgId,
    personType: r.personType === 'anonymous' ? 'anonymous' : 'regular',
    active: r.active,
    region: r.region,
    handles: handles
      .filter((h) => h.personId === r.personId)
      .map(
        (h): HeldHandle => ({ type: h.type as PersonHandle['type'], value: h.value, verified: h.verified }),
      ),
    groups: groups.filter((g) => g.personId === r.personId).map((g) => g.groupName),
    createdAt: r.createdAt.toISOString(),
  }));
}

export async function findRows(db: Database, orgId: string, where?: SQL): Promise<PersonRow[]> {
  return db
    .select()
    .from(persons)
    .where(and(eq(persons.orgId, orgId), where));
}

export async function getIn(db: Database, orgId: string, personId: string): Promise<PersonRecord> {
  const [record] = await readRecords(db, await findRows(db, orgId, eq(persons.personId, personId)));
  if (!record) throw PersonErrors.PERSON_NOT_FOUND(personId);
  return record;
}
