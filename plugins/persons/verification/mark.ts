import { and, eq } from 'drizzle-orm';
import type { PersonHandle } from '../../../core/capabilities/person-directory.ts';
import type { Database } from '../../../core/ports/storage.ts';
import { personHandles } from '../schema.ts';

/**
 * Marks a handle the person holds as verified (never the reverse), in `db`: a transaction's, so the
 * proof and the mark commit together. False when the person does not hold the handle (nothing changes).
 */
export async function markVerified(
  db: Database,
  orgId: string,
  personId: string,
  handle: PersonHandle,
): Promise<boolean> {
  const h = personHandles;
  const marked = await db
    .update(h)
    .set({ verified: true })
    .where(
      and(eq(h.orgId, orgId), eq(h.personId, personId), eq(h.type, handle.type), eq(h.value, handle.value)),
    )
    .returning({ value: h.value });
  return marked.length > 0;
}
