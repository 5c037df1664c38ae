import { and, eq } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { passwordCredentials } from '../schema.ts';

/** The stored password hashes of persons. */
export function createCredentialStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const t = passwordCredentials;

  /** Sets (or replaces) the person's hash in `tx`. */
  async function setIn(tx: Transaction, orgId: string, personId: string, hash: string): Promise<void> {
    const updatedAt = new Date(clock.now());
    await tx.db
      .insert(t)
      .values({ orgId, personId, hash, updatedAt })
      .onConflictDoUpdate({ target: [t.orgId, t.personId], set: { hash, updatedAt } });
  }

  return {
    /** The person's hash, or undefined when no password is set. */
    async hashOf(orgId: string, personId: string): Promise<string | undefined> {
      const rows = await storage.db
        .select({ hash: t.hash })
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)))
        .limit(1);
      return rows[0]?.hash;
    },

    setIn,

    /** When the person's password was set, or undefined when none is. */
    async setAt(orgId: string, personId: string, tx?: Transaction): Promise<number | undefined> {
      const rows = await (tx?.db ?? storage.db)
        .select({ at: t.updatedAt })
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)))
        .limit(1);
      return rows[0]?.at.getTime();
    },

    /** Deletes the person's password in `tx`: when it was set, or undefined when there was none. */
    async deleteIn(tx: Transaction, orgId: string, personId: string): Promise<number | undefined> {
      const rows = await tx.db
        .delete(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)))
        .returning({ at: t.updatedAt });
      return rows[0]?.at.getTime();
    },

    /** Sets (or replaces) the person's hash; `then` runs in the same transaction (the event). */
    set(orgId: string, personId: string, hash: string, then: (tx: Transaction) => Promise<unknown>) {
      return storage.transaction(async (tx) => {
        await setIn(tx, orgId, personId, hash);
        await then(tx);
      });
    },

    /**
     * Replaces an imported or outdated hash after a successful sign-in, only if it is still the one
     * verified: a password set meanwhile by the API wins.
     */
    async rehash(orgId: string, personId: string, verified: string, hash: string): Promise<void> {
      await storage.db
        .update(t)
        .set({ hash, updatedAt: new Date(clock.now()) })
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId), eq(t.hash, verified)));
    },
  };
}

export type CredentialStore = ReturnType<typeof createCredentialStore>;
