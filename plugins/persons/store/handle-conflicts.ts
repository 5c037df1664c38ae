import { and, eq } from 'drizzle-orm';
import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Database } from '../../../core/ports/storage.ts';
import { PersonErrors } from '../errors.ts';
import { personHandles, persons } from '../schema.ts';

/** Postgres said `unique_violation` somewhere in the error's cause chain (drizzle wraps driver errors). */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err; e instanceof Object; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === '23505') return true;
  return false;
}

/** The handle of these that a person already holds, with that person's region, for a 409's message. */
export async function takenHandle(db: Database, orgId: string, handles: PersonHandle[]) {
  for (const h of handles) {
    const [row] = await db
      .select({ region: persons.region })
      .from(personHandles)
      .innerJoin(persons, eq(persons.personId, personHandles.personId))
      .where(
        and(eq(personHandles.orgId, orgId), eq(personHandles.type, h.type), eq(personHandles.value, h.value)),
      );
    if (row) return { handle: h, region: row.region };
  }
  return undefined;
}

/** The reference's rule: a request that names a region may not reach a person living in another. */
export function refuseOtherRegion(
  where: string,
  person: { region: string; regionGiven?: boolean },
  taken: { handle: PersonHandle; region: string },
) {
  if (person.regionGiven && taken.region !== person.region)
    throw PersonErrors.REGION_CONFLICT(`${where}.region`, taken.handle, taken.region, person.region);
}
