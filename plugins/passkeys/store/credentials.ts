import { and, asc, eq } from 'drizzle-orm';
import type { PersonCredential } from '../../../core/factors/credentials.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { passkeyCredentials } from '../schema.ts';

/** A stored passkey. */
export type Passkey = typeof passkeyCredentials.$inferSelect;

/** What a verified registration adds. */
export type NewPasskey = Omit<Passkey, 'credentialId' | 'createdAt' | 'lastUsedAt'>;

/** A passkey as the credentials API lists it: a first factor and a second one alike. */
export const personCredentialOf = (p: Passkey): PersonCredential => ({
  credentialId: p.credentialId,
  type: 'webauthn',
  name: p.name,
  createdAt: p.createdAt,
  ...(p.lastUsedAt !== null ? { lastUsedAt: p.lastUsedAt } : {}),
  firstFactor: true,
  secondFactor: true,
});

/** The passkeys of persons, by organization. */
export function createPasskeyStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const t = passkeyCredentials;

  return {
    /** The person's passkeys, oldest first. */
    list(orgId: string, personId: string, tx?: Transaction): Promise<Passkey[]> {
      return (tx?.db ?? storage.db)
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)))
        .orderBy(asc(t.createdAt), asc(t.credentialId));
    },

    /** The passkey with this authenticator credential ID in the organization, or undefined. */
    async byWebauthnId(orgId: string, webauthnId: string): Promise<Passkey | undefined> {
      const rows = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.webauthnId, webauthnId)))
        .limit(1);
      return rows[0];
    },

    /** Adds a passkey; undefined when its authenticator credential ID is in the organization already. */
    async add(passkey: NewPasskey): Promise<Passkey | undefined> {
      const rows = await storage.db
        .insert(t)
        .values({ ...passkey, credentialId: uuidv7(clock.now()), createdAt: clock.now() })
        .onConflictDoNothing({ target: [t.orgId, t.webauthnId] })
        .returning();
      return rows[0];
    },

    /**
     * Records a use: the counter and backup state the assertion reported. Only if the counter is still
     * the one verified against, so two racing uses of a cloned authenticator's counter give one success.
     */
    async recordUse(p: Passkey, use: { counter: number; backedUp: boolean }): Promise<boolean> {
      const rows = await storage.db
        .update(t)
        .set({ counter: use.counter, backedUp: use.backedUp, lastUsedAt: clock.now() })
        .where(and(eq(t.credentialId, p.credentialId), eq(t.counter, p.counter)))
        .returning({ id: t.credentialId });
      // A counter of 0 that stays 0 (authenticators without one, synced passkeys) is not a replay.
      return rows.length === 1;
    },

    /** Deletes one of the person's passkeys in `tx`; what it deleted, or undefined. */
    async deleteIn(tx: Transaction, orgId: string, personId: string, credentialId: string) {
      const rows = await tx.db
        .delete(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId), eq(t.credentialId, credentialId)))
        .returning();
      return rows[0];
    },
  };
}

export type PasskeyStore = ReturnType<typeof createPasskeyStore>;
