import { and, eq, isNotNull, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { PersonCredential } from '../../../core/factors/credentials.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { totpCredentials, totpRecoveryCodes } from '../schema.ts';

const t = totpCredentials;
const r = totpRecoveryCodes;

export type TotpRow = typeof totpCredentials.$inferSelect;

/**
 * Serialises the writes about one person's authenticators: an enrolment, a confirmation and the
 * person's deletion (beforePersonDeleted) take turns, so none leaves a row for a person already gone or
 * two confirmed authenticators.
 */
export const lockPerson = (tx: Transaction, personId: string) =>
  tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`totp:${personId}`}, 0))`);

/** A confirmed authenticator as the credentials API lists it. */
export const listed = (row: TotpRow): PersonCredential => ({
  credentialId: row.id,
  type: 'totp',
  ...(row.name ? { name: row.name } : {}),
  createdAt: (row.confirmedAt ?? row.createdAt).getTime(),
  ...(row.lastUsedAt ? { lastUsedAt: row.lastUsedAt.getTime() } : {}),
  firstFactor: false,
  secondFactor: true,
});

/** Deletes every authenticator of the person (their recovery codes go with them), in `tx`. */
export async function forgetPerson(tx: Transaction, orgId: string, personId: string): Promise<void> {
  await lockPerson(tx, personId);
  await tx.db.delete(t).where(and(eq(t.orgId, orgId), eq(t.personId, personId)));
}

/** The stored authenticators and recovery codes of persons. */
export function createTotpStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const now = () => new Date(clock.now());

  return {
    /** One authenticator of the person, pending or confirmed. */
    async find(db: Database, orgId: string, personId: string, id: string): Promise<TotpRow | undefined> {
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.id, id), eq(t.orgId, orgId), eq(t.personId, personId)))
        .limit(1);
      return rows[0];
    },

    /** The person's confirmed authenticator, if any. */
    async confirmedOf(orgId: string, personId: string): Promise<TotpRow | undefined> {
      const rows = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId), isNotNull(t.confirmedAt)))
        .limit(1);
      return rows[0];
    },

    /** The person's confirmed authenticators, for the credentials API. */
    async list(orgId: string, personId: string, tx?: Transaction): Promise<PersonCredential[]> {
      const rows = await (tx?.db ?? storage.db)
        .select()
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId), isNotNull(t.confirmedAt)));
      return rows.map(listed);
    },

    /** Stores a new pending enrolment in `tx`, replacing the person's earlier pending ones. */
    async addPending(tx: Transaction, row: typeof totpCredentials.$inferInsert): Promise<void> {
      await tx.db
        .delete(t)
        .where(and(eq(t.orgId, row.orgId), eq(t.personId, row.personId), isNull(t.confirmedAt)));
      await tx.db.insert(t).values(row);
    },

    /**
     * Confirms a pending enrolment in `tx` with the step of the code that confirmed it (so that code is
     * not accepted again), removes the person's other authenticators and gives it these recovery codes.
     */
    async confirm(tx: Transaction, row: TotpRow, step: number, digests: string[]): Promise<void> {
      const at = now();
      await tx.db.update(t).set({ confirmedAt: at, expiresAt: null, lastStep: step }).where(eq(t.id, row.id));
      await tx.db
        .delete(t)
        .where(and(eq(t.orgId, row.orgId), eq(t.personId, row.personId), ne(t.id, row.id)));
      await tx.db.insert(r).values(digests.map((digest) => ({ credentialId: row.id, digest })));
    },

    /** Replaces the recovery codes of a confirmed authenticator, in `tx`. */
    async replaceRecoveryCodes(tx: Transaction, credentialId: string, digests: string[]): Promise<void> {
      await tx.db.delete(r).where(eq(r.credentialId, credentialId));
      await tx.db.insert(r).values(digests.map((digest) => ({ credentialId, digest })));
    },

    /**
     * Records a code of `step` as used, only if no code of that step or a later one was: one statement,
     * so two requests racing with the same code get one success.
     */
    async useStep(id: string, step: number): Promise<boolean> {
      const rows = await storage.db
        .update(t)
        .set({ lastStep: step, lastUsedAt: now() })
        .where(and(eq(t.id, id), isNotNull(t.confirmedAt), or(isNull(t.lastStep), lt(t.lastStep, step))))
        .returning({ id: t.id });
      return rows.length === 1;
    },

    /** Spends a recovery code of the authenticator, once: false when it is unknown or spent. */
    async spendRecoveryCode(id: string, digest: string): Promise<boolean> {
      return storage.transaction(async (tx) => {
        const spent = await tx.db
          .update(r)
          .set({ usedAt: now() })
          .where(and(eq(r.credentialId, id), eq(r.digest, digest), isNull(r.usedAt)))
          .returning({ digest: r.digest });
        if (spent.length !== 1) return false;
        await tx.db.update(t).set({ lastUsedAt: now() }).where(eq(t.id, id));
        return true;
      });
    },

    /** Deletes one authenticator of the person in `tx` (pending or confirmed) and answers it. */
    async remove(tx: Transaction, orgId: string, personId: string, id: string): Promise<TotpRow | undefined> {
      await lockPerson(tx, personId);
      const rows = await tx.db
        .delete(t)
        .where(and(eq(t.id, id), eq(t.orgId, orgId), eq(t.personId, personId)))
        .returning();
      return rows[0];
    },
  };
}

export type TotpStore = ReturnType<typeof createTotpStore>;
