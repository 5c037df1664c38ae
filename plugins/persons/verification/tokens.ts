import { and, eq, gt, isNull } from 'drizzle-orm';
import type { HandleType, PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { randomSecret, sha256, toHex } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { personHandleVerifications } from '../schema.ts';
import { markVerified } from './mark.ts';

/** Why a verification link verifies nothing. */
export type VerificationRefusal = 'unknown' | 'expired' | 'used';

/** An open verification, as the page shows it. */
export interface OpenVerification {
  orgId: string;
  personId: string;
  handle: PersonHandle;
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const digestOf = async (token: string) => toHex(await sha256(token));

/** Email verification links, stored as digests; a link verifies once, within its lifetime. */
export function createVerificationTokens(deps: { storage: Storage; clock: Clock; ttlMs: number }) {
  const { storage, clock } = deps;
  const t = personHandleVerifications;
  return {
    ttlMs: deps.ttlMs,

    /**
     * A new link's token, its digest and expiry, made before the transaction that records it (the
     * digest awaits WebCrypto; an embedded database holds its one connection for a transaction).
     */
    async make(): Promise<{ token: string; digest: string; expiresAt: number }> {
      const token = randomSecret('');
      return { token, digest: await digestOf(token), expiresAt: clock.now() + deps.ttlMs };
    },

    /** Records a link made by `make` for the handle, in `tx`. */
    async issue(tx: Transaction, v: OpenVerification, made: { digest: string; expiresAt: number }) {
      const now = clock.now();
      const { expiresAt } = made;
      await tx.db.insert(t).values({
        digest: made.digest,
        orgId: v.orgId,
        personId: v.personId,
        handleType: v.handle.type,
        handleValue: v.handle.value,
        createdAt: new Date(now),
        expiresAt: new Date(expiresAt),
      });
    },

    /** The verification a token names, or why it verifies nothing. */
    async find(
      token: string,
    ): Promise<{ ok: true; verification: OpenVerification } | { ok: false; refusal: VerificationRefusal }> {
      if (!TOKEN_SHAPE.test(token)) return { ok: false, refusal: 'unknown' };
      const [row] = await storage.db
        .select()
        .from(t)
        .where(eq(t.digest, await digestOf(token)))
        .limit(1);
      if (!row) return { ok: false, refusal: 'unknown' };
      if (row.usedAt) return { ok: false, refusal: 'used' };
      if (row.expiresAt.getTime() <= clock.now()) return { ok: false, refusal: 'expired' };
      return {
        ok: true,
        verification: {
          orgId: row.orgId,
          personId: row.personId,
          handle: { type: row.handleType as HandleType, value: row.handleValue },
        },
      };
    },

    /**
     * Uses the token and marks its handle verified, in one transaction; false when the token was used
     * meanwhile, expired, or the person no longer holds the handle (nothing changes then).
     */
    async consume(token: string): Promise<boolean> {
      const digest = await digestOf(token);
      const refused = new Error('not verified');
      return storage
        .transaction(async (tx) => {
          const now = new Date(clock.now());
          const [used] = await tx.db
            .update(t)
            .set({ usedAt: now })
            .where(and(eq(t.digest, digest), isNull(t.usedAt), gt(t.expiresAt, now)))
            .returning();
          if (!used) throw refused;
          const handle = { type: used.handleType as HandleType, value: used.handleValue };
          if (!(await markVerified(tx.db, used.orgId, used.personId, handle))) throw refused;
          return true;
        })
        .catch((e) => {
          if (e === refused) return false;
          throw e;
        });
    },
  };
}

export type VerificationTokens = ReturnType<typeof createVerificationTokens>;
