import { and, eq } from 'drizzle-orm';
import type {
  AnalyticsContext,
  PersonHandle,
  PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { PersonDisabling } from '../../../core/persons/person-disabled.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { PersonErrors } from '../errors.ts';
import { groupMemberships, personHandles, persons } from '../schema.ts';
import type { CreatePersons, NewPerson } from './create-persons.ts';
import { ensureGroups } from './groups.ts';
import { isUniqueViolation, refuseOtherRegion } from './handle-conflicts.ts';
import { getIn } from './person-records.ts';

export function createPersonUpsert(deps: {
  storage: Storage;
  clock: Clock;
  create: CreatePersons;
  /** The personDisabled hook, in the transaction that sets `active` false. */
  onDisabled?: ((disabling: PersonDisabling) => Promise<unknown>) | undefined;
}) {
  const { storage, clock, create } = deps;

  /**
   * PUT /persons with one person: updates the person holding its handles (active and groups when
   * given, handles it lacks added) or, when nobody holds any, creates it. Handles of two persons: 409.
   */
  return async function upsert(
    orgId: string,
    person: NewPerson,
    given: { active?: boolean; groups?: string[] },
    analytics: AnalyticsContext,
  ): Promise<{ created: boolean; person: PersonRecord }> {
    const owners = new Set<string>();
    let held: { handle: PersonHandle; region: string } | undefined;
    for (const h of person.handles) {
      const [row] = await storage.db
        .select({ personId: personHandles.personId, region: persons.region })
        .from(personHandles)
        .innerJoin(persons, eq(persons.personId, personHandles.personId))
        .where(
          and(
            eq(personHandles.orgId, orgId),
            eq(personHandles.type, h.type),
            eq(personHandles.value, h.value),
          ),
        );
      if (!row) continue;
      owners.add(row.personId);
      held ??= { handle: h, region: row.region };
    }
    if (owners.size === 0) {
      const [made] = await create(orgId, [person], analytics);
      return { created: true, person: made! };
    }
    if (owners.size > 1)
      throw PersonErrors.HANDLE_CONFLICT(
        `body.handles: the handles belong to ${owners.size} different persons of this organization; one PUT updates one person`,
      );
    // A person's region never changes, so this check before the write cannot go stale.
    if (held) refuseOtherRegion('body', person, held);
    const [personId] = [...owners] as [string];
    try {
      const updated = await storage.transaction(async (tx) => {
        if (given.active !== undefined) {
          await tx.db
            .update(persons)
            .set({ active: given.active, updatedAt: new Date(clock.now()) })
            .where(and(eq(persons.orgId, orgId), eq(persons.personId, personId)));
          if (!given.active) await deps.onDisabled?.({ orgId, personId, tx });
        }
        await tx.db
          .insert(personHandles)
          .values(
            person.handles.map((h) => ({
              orgId,
              personId,
              type: h.type,
              value: h.value,
              verified: h.verified ?? false,
            })),
          )
          .onConflictDoNothing({ target: [personHandles.orgId, personHandles.type, personHandles.value] });
        // A handle the person already held becomes verified when the body says so (never the reverse).
        for (const h of person.handles.filter((x) => x.verified))
          await tx.db
            .update(personHandles)
            .set({ verified: true })
            .where(
              and(
                eq(personHandles.orgId, orgId),
                eq(personHandles.personId, personId),
                eq(personHandles.type, h.type),
                eq(personHandles.value, h.value),
              ),
            );
        if (given.groups) {
          await tx.db
            .delete(groupMemberships)
            .where(and(eq(groupMemberships.orgId, orgId), eq(groupMemberships.personId, personId)));
          await ensureGroups(tx.db, clock, orgId, given.groups);
          if (given.groups.length)
            await tx.db
              .insert(groupMemberships)
              .values(given.groups.map((groupName) => ({ orgId, groupName, personId })));
        }
        const now = await getIn(tx.db, orgId, personId);
        // A handle another person took meanwhile was skipped by the insert: roll back, and say which.
        const missing = person.handles.find(
          (h) => !now.handles.some((u) => u.type === h.type && u.value === h.value),
        );
        if (missing) throw PersonErrors.HANDLE_TAKEN('body.handles', missing.type, missing.value);
        return now;
      });
      return { created: false, person: updated };
    } catch (err) {
      if (isUniqueViolation(err))
        throw PersonErrors.HANDLE_CONFLICT('body.handles: a handle was taken meanwhile');
      throw err;
    }
  };
}
