import { and, eq, sql } from 'drizzle-orm';
import { batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { tokensIssuedPersons } from '../schema.ts';

interface Claim {
  orgId: string;
  personId: string;
}

/** Persons remembered as having a token, per replica. */
const MAX_KNOWN = 200_000;

const keyOf = (c: Claim) => `${c.orgId}/${c.personId}`;

/**
 * Decides `first_token`: the insert of a person's row is the decision, so of two issuances racing for
 * a person's first token exactly one is first. Inserts are group-committed; persons known to have a
 * token are remembered (that never changes back), so later tokens cost no write.
 */
export function createFirstTokens(storage: Storage, clock: Clock) {
  const known = new Set<string>();
  const inserts = createGroupCommit<Claim, boolean>({
    storage,
    transaction: false,
    ...batchingFor(storage),
    async write(tx, items) {
      const now = new Date(clock.now());
      const inserted = await tx.db
        .insert(tokensIssuedPersons)
        .values(items.map((i) => ({ ...i, firstIssuedAt: now })))
        .onConflictDoNothing()
        .returning({ orgId: tokensIssuedPersons.orgId, personId: tokensIssuedPersons.personId });
      // A person twice in one batch: only the first of them is first.
      const fresh = new Set(inserted.map(keyOf));
      return items.map((i) => fresh.delete(keyOf(i)));
    },
  });

  return {
    /** Whether the person has had no token yet (for the hook's trigger content; not a decision). */
    async isFirst(orgId: string, personId: string): Promise<boolean> {
      if (known.has(keyOf({ orgId, personId }))) return false;
      const rows = await storage.db
        .select({ one: sql`1` })
        .from(tokensIssuedPersons)
        .where(and(eq(tokensIssuedPersons.orgId, orgId), eq(tokensIssuedPersons.personId, personId)))
        .limit(1);
      return rows.length === 0;
    },
    /** Records an issued token; true when it is the person's first. */
    async claim(orgId: string, personId: string): Promise<boolean> {
      const key = keyOf({ orgId, personId });
      if (known.has(key)) return false;
      const first = await inserts.add({ orgId, personId });
      // Bounded: forgetting a person costs one no-op insert later, never a wrong answer.
      if (known.size >= MAX_KNOWN) known.clear();
      known.add(key);
      return first;
    },
  };
}
