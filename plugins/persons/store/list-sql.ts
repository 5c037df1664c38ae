import { and, eq, inArray, ne, notInArray, or, type SQL } from 'drizzle-orm';
import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Database } from '../../../core/ports/storage.ts';
import type { Comparison } from '../api/filter.ts';
import type { PersonsListRequest } from '../api/list-query.ts';
import { groupMemberships, personHandles, persons } from '../schema.ts';

// Each membership test is one subquery the planner answers from an index: persons_handles_unique
// (org_id, type, value) for a handle, the membership primary key (org_id, group_name, person_id) for a
// group. Every subquery names the organization, so no other organization's row can match.
const holdingHandle = (db: Database, orgId: string, h: PersonHandle) =>
  db
    .select({ personId: personHandles.personId })
    .from(personHandles)
    .where(
      and(eq(personHandles.orgId, orgId), eq(personHandles.type, h.type), eq(personHandles.value, h.value)),
    );

const inGroup = (db: Database, orgId: string, name: string) =>
  db
    .select({ personId: groupMemberships.personId })
    .from(groupMemberships)
    .where(and(eq(groupMemberships.orgId, orgId), eq(groupMemberships.groupName, name)));

function comparisonSql(db: Database, orgId: string, c: Comparison): SQL {
  const is = c.op === 'eq';
  switch (c.attr) {
    case 'person_id':
      return is ? eq(persons.personId, c.value) : ne(persons.personId, c.value);
    case 'active':
      return is ? eq(persons.active, c.value) : ne(persons.active, c.value);
    case 'region':
      return is ? eq(persons.region, c.value) : ne(persons.region, c.value);
    case 'handles': {
      const sub = holdingHandle(db, orgId, c.value);
      return is ? inArray(persons.personId, sub) : notInArray(persons.personId, sub);
    }
    case 'groups': {
      const sub = inGroup(db, orgId, c.value);
      return is ? inArray(persons.personId, sub) : notInArray(persons.personId, sub);
    }
  }
}

/** The conditions of a list request, the organization's first: every other narrows within it. */
export function listConditions(db: Database, orgId: string, q: PersonsListRequest): SQL | undefined {
  const where: Array<SQL | undefined> = [eq(persons.orgId, orgId)];
  if (!q.allTypes) where.push(eq(persons.personType, 'regular'));
  if (q.region) where.push(eq(persons.region, q.region));
  if (q.handle) where.push(inArray(persons.personId, holdingHandle(db, orgId, q.handle)));
  // An empty list names nobody (inArray with [] is false).
  if (q.ids) where.push(inArray(persons.personId, q.ids));
  if (q.filter) where.push(or(...q.filter.map((all) => and(...all.map((c) => comparisonSql(db, orgId, c))))));
  return and(...where);
}
