import { and, eq, sql } from 'drizzle-orm';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { ConsentErrors } from '../errors.ts';
import { type ConsentLevel, canonical, type GdprConsent, isConsentLevel } from '../levels.ts';
import { consentsGdpr } from '../schema.ts';

/**
 * Serialises the writes about one person's consents: two PUTs take turns (each event's old list is what
 * the other left), and a person's deletion (beforePersonDeleted) waits for a write in flight.
 */
const lockPerson = (tx: Transaction, personId: string) =>
  tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`consents:${personId}`}, 0))`);

async function consentsIn(db: Database, orgId: string, personId: string): Promise<GdprConsent[]> {
  const rows = await db
    .select({ level: consentsGdpr.consentLevel, createdAt: consentsGdpr.createdAt })
    .from(consentsGdpr)
    .where(and(eq(consentsGdpr.personId, personId), eq(consentsGdpr.orgId, orgId)));
  const at = new Map(rows.map((r) => [r.level, r.createdAt.toISOString()]));
  const levels = canonical(rows.map((r) => r.level).filter(isConsentLevel));
  return levels.map((consent_level) => ({ consent_level, created_at: at.get(consent_level)! }));
}

/** Deletes the person's consents (in the deletion's transaction). */
export async function forgetPerson(tx: Transaction, orgId: string, personId: string): Promise<void> {
  await lockPerson(tx, personId);
  await tx.db
    .delete(consentsGdpr)
    .where(and(eq(consentsGdpr.personId, personId), eq(consentsGdpr.orgId, orgId)));
}

/** A person's GDPR consents; every change publishes GdprConsentsChanged_v1 in its transaction. */
export function createConsentStore(deps: {
  storage: Storage;
  clock: Clock;
  events: EventPublisher;
  persons: PersonDirectory;
}) {
  const { storage, clock, events, persons } = deps;

  async function mustExist(orgId: string, personId: string) {
    if (!(await persons.get(orgId, personId))) throw ConsentErrors.PERSON_NOT_FOUND(personId);
  }

  /**
   * Replaces the levels: those held already keep their created_at, new ones get now, the rest go. A
   * change publishes GdprConsentsChanged_v1 with both lists; giving the same levels again changes nothing.
   */
  async function replace(orgId: string, personId: string, wanted: ConsentLevel[]): Promise<GdprConsent[]> {
    const levels = canonical(wanted);
    return storage.transaction(async (tx) => {
      // Read under the lock a deletion takes too (beforePersonDeleted): one that committed first is a
      // 404 here and no event; one that comes later waits for this write, then deletes its rows.
      await lockPerson(tx, personId);
      if (!(await persons.get(orgId, personId, { tx }))) throw ConsentErrors.PERSON_NOT_FOUND(personId);
      const old = await consentsIn(tx.db, orgId, personId);
      const held = new Map(old.map((c) => [c.consent_level, c.created_at]));
      const createdAt = new Date(clock.now()).toISOString();
      const next = levels.map((consent_level) => ({
        consent_level,
        created_at: held.get(consent_level) ?? createdAt,
      }));
      if (next.length === old.length && next.every((c) => held.has(c.consent_level))) return old;
      await tx.db
        .delete(consentsGdpr)
        .where(and(eq(consentsGdpr.personId, personId), eq(consentsGdpr.orgId, orgId)));
      if (next.length)
        await tx.db.insert(consentsGdpr).values(
          next.map((c) => ({
            personId,
            orgId,
            consentLevel: c.consent_level,
            createdAt: new Date(c.created_at),
          })),
        );
      await events.publish(
        orgId,
        'GdprConsentsChanged_v1',
        { person_id: personId, new_gdpr_consents: next, old_gdpr_consents: old },
        { tx },
      );
      return next;
    });
  }

  return {
    async get(orgId: string, personId: string): Promise<GdprConsent[]> {
      await mustExist(orgId, personId);
      return consentsIn(storage.db, orgId, personId);
    },
    set: replace,
    clear: (orgId: string, personId: string) => replace(orgId, personId, []),
  };
}

export type ConsentStore = ReturnType<typeof createConsentStore>;
