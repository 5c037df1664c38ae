import { and, asc, count, eq, gt } from 'drizzle-orm';
import type { PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { PersonDeletion } from '../../../core/persons/before-person-deleted.ts';
import type { PersonDisabling } from '../../../core/persons/person-disabled.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { PersonsListRequest } from '../api/list-query.ts';
import { PersonErrors } from '../errors.ts';
import { persons } from '../schema.ts';
import { createPersonCreator } from './create-persons.ts';
import { createGroupStore } from './groups.ts';
import { listConditions } from './list-sql.ts';
import { eventHandles, getIn, readRecords } from './person-records.ts';
import { createPersonUpsert } from './upsert-person.ts';

export type { NewPerson } from './create-persons.ts';
export { isUniqueViolation } from './handle-conflicts.ts';

export function createPersonStore(deps: {
  storage: Storage;
  clock: Clock;
  events: EventPublisher;
  /** Other plugins' clean-up of a person, in the deleting transaction (the beforePersonDeleted hook). */
  beforeDelete?: (deletion: PersonDeletion) => Promise<unknown>;
  /** Other plugins' part of making a person inactive, in its transaction (the personDisabled hook). */
  onDisabled?: (disabling: PersonDisabling) => Promise<unknown>;
}) {
  const { storage, clock, events } = deps;
  const create = createPersonCreator({ storage, clock, events });

  return {
    create,

    get: (orgId: string, personId: string) => getIn(storage.db, orgId, personId),

    upsert: createPersonUpsert({ storage, clock, create, onDisabled: deps.onDisabled }),

    /**
     * A page in creation order (after `after`, or from `offset`), and how many persons match in all:
     * two statements for the page and the count, and one each for the handles and groups asked for.
     */
    async list(
      orgId: string,
      q: PersonsListRequest,
    ): Promise<{ persons: PersonRecord[]; more: boolean; total: number }> {
      const where = listConditions(storage.db, orgId, q);
      const [rows, [{ n } = { n: 0 }]] = await Promise.all([
        storage.db
          .select()
          .from(persons)
          .where(and(where, q.after ? gt(persons.personId, q.after) : undefined))
          .orderBy(asc(persons.personId))
          .limit(q.limit + 1)
          .offset(q.offset ?? 0),
        storage.db.select({ n: count() }).from(persons).where(where),
      ]);
      return {
        persons: await readRecords(storage.db, rows.slice(0, q.limit), q.fields),
        more: rows.length > q.limit,
        total: Number(n),
      };
    },

    async setActive(orgId: string, personId: string, active: boolean): Promise<PersonRecord> {
      return storage.transaction(async (tx) => {
        const updated = await tx.db
          .update(persons)
          .set({ active, updatedAt: new Date(clock.now()) })
          .where(and(eq(persons.orgId, orgId), eq(persons.personId, personId)))
          .returning({ id: persons.personId });
        if (updated.length === 0) throw PersonErrors.PERSON_NOT_FOUND(personId);
        if (!active) await deps.onDisabled?.({ orgId, personId, tx });
        return getIn(tx.db, orgId, personId);
      });
    },

    /**
     * Deletes the person (handles and memberships with it, and other plugins' rows through
     * beforePersonDeleted, all in one transaction) and publishes PersonDeleted_v1.
     */
    async delete(orgId: string, personId: string): Promise<void> {
      await storage.transaction(async (tx) => {
        const person = await getIn(tx.db, orgId, personId);
        await deps.beforeDelete?.({ orgId, personId, tx });
        await tx.db.delete(persons).where(and(eq(persons.orgId, orgId), eq(persons.personId, personId)));
        await events.publish(
          orgId,
          'PersonDeleted_v1',
          {
            person_id: personId,
            region: person.region,
            handles: eventHandles(person.handles),
            groups: person.groups,
          },
          { tx },
        );
      });
    },

    ...createGroupStore({ storage, clock }),
  };
}

export type PersonStore = ReturnType<typeof createPersonStore>;
