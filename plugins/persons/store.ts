import { and, asc, count, eq, gt, inArray, type SQL } from 'drizzle-orm';
import type {
  AnalyticsContext,
  HeldHandle,
  PersonHandle,
  PersonRecord,
} from '../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../core/events/types.ts';
import { uuidv7 } from '../../core/ids.ts';
import type { PersonDeletion } from '../../core/persons/before-person-deleted.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../core/ports/storage.ts';
import { analyticsMetadata } from './analytics.ts';
import { PersonErrors } from './errors.ts';
import { HANDLE_TYPE_NUMBER } from './handles.ts';
import type { PersonsListRequest } from './list-query.ts';
import { listConditions } from './list-sql.ts';
import { groupMemberships, personGroups, personHandles, persons } from './schema.ts';

/** A person to create, already checked and normalised. */
export interface NewPerson {
  personType: 'regular' | 'anonymous';
  active: boolean;
  region: string;
  /** The request named the region: a handle held by a person in another region is then a 409. */
  regionGiven?: boolean;
  /** `verified` when the organization says so (created through the API) or a provider vouched. */
  handles: Array<PersonHandle & { verified?: boolean }>;
  groups: string[];
}

/** Postgres said `unique_violation` somewhere in the error's cause chain (drizzle wraps driver errors). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err; e instanceof Object; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === '23505') return true;
  return false;
}

type PersonRow = typeof persons.$inferSelect;
const eventHandles = (handles: PersonHandle[]) =>
  handles.map((h) => ({ type: HANDLE_TYPE_NUMBER[h.type], value: h.value }));

export function createPersonStore(deps: {
  storage: Storage;
  clock: Clock;
  events: EventPublisher;
  /** Other plugins' clean-up of a person, in the deleting transaction (the beforePersonDeleted hook). */
  beforeDelete?: (deletion: PersonDeletion) => Promise<unknown>;
}) {
  const { storage, clock, events } = deps;

  /** The rows as PersonRecords, with their handles and groups, in the rows' order. */
  async function recordsOf(
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

  async function findRows(db: Database, orgId: string, where?: SQL): Promise<PersonRow[]> {
    return db
      .select()
      .from(persons)
      .where(and(eq(persons.orgId, orgId), where));
  }

  async function getIn(db: Database, orgId: string, personId: string): Promise<PersonRecord> {
    const [record] = await recordsOf(db, await findRows(db, orgId, eq(persons.personId, personId)));
    if (!record) throw PersonErrors.PERSON_NOT_FOUND(personId);
    return record;
  }

  /** Makes the named groups exist (first use creates them). */
  async function ensureGroups(db: Database, orgId: string, names: string[]) {
    if (names.length === 0) return;
    const createdAt = new Date(clock.now());
    await db
      .insert(personGroups)
      .values(names.map((name) => ({ orgId, name, createdAt })))
      .onConflictDoNothing();
  }

  /** The handle of these that a person already holds, with that person's region, for a 409's message. */
  async function takenHandle(orgId: string, handles: PersonHandle[]) {
    for (const h of handles) {
      const [row] = await storage.db
        .select({ region: persons.region })
        .from(personHandles)
        .innerJoin(persons, eq(persons.personId, personHandles.personId))
        .where(
          and(
            eq(personHandles.orgId, orgId),
            eq(personHandles.type, h.type),
            eq(personHandles.value, h.value),
          ),
        );
      if (row) return { handle: h, region: row.region };
    }
    return undefined;
  }

  /** The reference's rule: a request that names a region may not reach a person living in another. */
  function refuseOtherRegion(
    where: string,
    person: NewPerson,
    taken: { handle: PersonHandle; region: string },
  ) {
    if (person.regionGiven && taken.region !== person.region)
      throw PersonErrors.REGION_CONFLICT(`${where}.region`, taken.handle, taken.region, person.region);
  }

  async function insertIn(tx: Transaction, orgId: string, people: NewPerson[], analytics: AnalyticsContext) {
    const now = clock.now();
    const createdAt = new Date(now);
    const made = people.map((p) => ({ ...p, personId: uuidv7(now) }));
    await tx.db.insert(persons).values(
      made.map((p) => ({
        personId: p.personId,
        orgId,
        personType: p.personType,
        active: p.active,
        region: p.region,
        createdAt,
        updatedAt: createdAt,
      })),
    );
    const handles = made.flatMap((p) =>
      p.handles.map((h) => ({
        orgId,
        personId: p.personId,
        type: h.type,
        value: h.value,
        verified: h.verified ?? false,
      })),
    );
    if (handles.length) await tx.db.insert(personHandles).values(handles);
    await ensureGroups(tx.db, orgId, [...new Set(made.flatMap((p) => p.groups))]);
    const members = made.flatMap((p) =>
      p.groups.map((groupName) => ({ orgId, groupName, personId: p.personId })),
    );
    if (members.length) await tx.db.insert(groupMemberships).values(members);
    const analytics_metadata = analyticsMetadata(analytics);
    for (const p of made) {
      if (p.personType === 'anonymous')
        await events.publish(
          orgId,
          'AnonymousPersonCreated_v1',
          { analytics_metadata, person_id: p.personId, region: p.region },
          { tx },
        );
      else
        await events.publish(
          orgId,
          'PersonCreated_v1',
          {
            analytics_metadata,
            person_id: p.personId,
            region: p.region,
            handles: eventHandles(p.handles),
            gdpr_consents: [],
          },
          { tx },
        );
    }
    return made.map((p) => p.personId);
  }

  return {
    /**
     * Creates every person or none, and publishes PersonCreated_v1 (AnonymousPersonCreated_v1) for each
     * in the same transaction. A handle another person holds is a 409, also when two requests race.
     */
    async create(orgId: string, people: NewPerson[], analytics: AnalyticsContext): Promise<PersonRecord[]> {
      try {
        return await storage.transaction(async (tx) => {
          const ids = await insertIn(tx, orgId, people, analytics);
          const rows = await findRows(tx.db, orgId, inArray(persons.personId, ids));
          const byId = new Map(rows.map((r) => [r.personId, r]));
          return recordsOf(
            tx.db,
            ids.map((id) => byId.get(id)!),
          );
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const all = people.flatMap((p) => p.handles);
        const taken = await takenHandle(orgId, all);
        const index = people.findIndex(
          (p) =>
            taken && p.handles.some((h) => h.value === taken.handle.value && h.type === taken.handle.type),
        );
        const where = people.length > 1 ? `body[${index}]` : 'body';
        if (taken && people[index]) refuseOtherRegion(where, people[index], taken);
        throw PersonErrors.HANDLE_TAKEN(
          `${where}.handles`,
          taken?.handle.type ?? 'handle',
          taken?.handle.value ?? '',
        );
      }
    },

    get: (orgId: string, personId: string) => getIn(storage.db, orgId, personId),

    /**
     * PUT /persons with one person: updates the person holding its handles (active and groups when
     * given, handles it lacks added) or, when nobody holds any, creates it. Handles of two persons: 409.
     */
    async upsert(
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
        const [made] = await this.create(orgId, [person], analytics);
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
          if (given.active !== undefined)
            await tx.db
              .update(persons)
              .set({ active: given.active, updatedAt: new Date(clock.now()) })
              .where(and(eq(persons.orgId, orgId), eq(persons.personId, personId)));
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
            await ensureGroups(tx.db, orgId, given.groups);
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
    },

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
        persons: await recordsOf(storage.db, rows.slice(0, q.limit), q.fields),
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

    /** Replaces the person's groups (groups are made on first use); answers the groups now held. */
    async setGroups(orgId: string, personId: string, groups: string[]): Promise<string[]> {
      return storage.transaction(async (tx) => {
        await getIn(tx.db, orgId, personId);
        await tx.db
          .delete(groupMemberships)
          .where(and(eq(groupMemberships.orgId, orgId), eq(groupMemberships.personId, personId)));
        await ensureGroups(tx.db, orgId, groups);
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
        await ensureGroups(tx.db, orgId, [name]);
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

export type PersonStore = ReturnType<typeof createPersonStore>;
