import { inArray } from 'drizzle-orm';
import type {
  AnalyticsContext,
  PersonHandle,
  PersonRecord,
} from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata } from '../../../core/http/sign-in-context.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { PersonErrors } from '../errors.ts';
import { groupMemberships, personHandles, persons } from '../schema.ts';
import { ensureGroups } from './groups.ts';
import { isUniqueViolation, refuseOtherRegion, takenHandle } from './handle-conflicts.ts';
import { eventHandles, findRows, readRecords } from './person-records.ts';

/** A person to create, already checked and normalised. */
export interface NewPerson {
  /** Fixed beforehand for a prospective person (the token_minted hook saw it); else made here. */
  personId?: string;
  personType: 'regular' | 'anonymous';
  active: boolean;
  region: string;
  /** The request named the region: a handle held by a person in another region is then a 409. */
  regionGiven?: boolean;
  /** `verified` when the organization says so (created through the API) or a provider vouched. */
  handles: Array<PersonHandle & { verified?: boolean }>;
  groups: string[];
}

export function createPersonCreator(deps: { storage: Storage; clock: Clock; events: EventPublisher }) {
  const { storage, clock, events } = deps;

  async function insertIn(tx: Transaction, orgId: string, people: NewPerson[], analytics: AnalyticsContext) {
    const now = clock.now();
    const createdAt = new Date(now);
    const made = people.map((p) => ({ ...p, personId: p.personId ?? uuidv7(now) }));
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
    await ensureGroups(tx.db, clock, orgId, [...new Set(made.flatMap((p) => p.groups))]);
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

  /**
   * Creates every person or none, and publishes PersonCreated_v1 (AnonymousPersonCreated_v1) for each
   * in the same transaction. A handle another person holds is a 409, also when two requests race.
   */
  return async function create(
    orgId: string,
    people: NewPerson[],
    analytics: AnalyticsContext,
  ): Promise<PersonRecord[]> {
    try {
      return await storage.transaction(async (tx) => {
        const ids = await insertIn(tx, orgId, people, analytics);
        const rows = await findRows(tx.db, orgId, inArray(persons.personId, ids));
        const byId = new Map(rows.map((r) => [r.personId, r]));
        return readRecords(
          tx.db,
          ids.map((id) => byId.get(id)!),
        );
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const all = people.flatMap((p) => p.handles);
      const taken = await takenHandle(storage.db, orgId, all);
      const index = people.findIndex(
        (p) => taken && p.handles.some((h) => h.value === taken.handle.value && h.type === taken.handle.type),
      );
      const where = people.length > 1 ? `body[${index}]` : 'body';
      if (taken && people[index]) refuseOtherRegion(where, people[index], taken);
      throw PersonErrors.HANDLE_TAKEN(
        `${where}.handles`,
        taken?.handle.type ?? 'handle',
        taken?.handle.value ?? '',
      );
    }
  };
}

export type CreatePersons = ReturnType<typeof createPersonCreator>;
