import { and, eq, lt, ne } from 'drizzle-orm';
import type { HandleType, PersonHandle } from '../../../core/capabilities/person-directory.ts';
import { randomSecret, sha256, toHex } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Database, Storage, Transaction } from '../../../core/ports/storage.ts';
import { passwordResetTokens } from '../schema.ts';

/** Why a reset token does not (or no longer) reset a password. */
export type TokenRefusal = 'unknown' | 'expired' | 'used' | 'superseded' | 'password_changed';

/** An open reset token, as the confirmation needs it. */
export interface OpenReset {
  /** The token's digest, as stored. */
  digest: string;
  orgId: string;
  personId: string;
  handle: PersonHandle;
  expiresAt: number;
}

export type TokenLookup = { ok: true; reset: OpenReset } | { ok: false; refusal: TokenRefusal };

/** A token as this service makes them: 256 random bits, base64url (43 characters). */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Settled and expired rows are kept this long (so a late click is told why), then swept. */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** How often an organization's old rows are swept, at most, by one replica. */
const SWEEP_EVERY_MS = 60_000;

export const digestOf = async (token: string) => toHex(await sha256(token));

/**
 * A new token and its digest, made before the transaction that stores it: the digest awaits WebCrypto,
 * and an embedded database holds its one connection for a whole transaction.
 */
export async function newResetToken(): Promise<{ token: string; digest: string }> {
  const token = randomSecret('');
  return { token, digest: await digestOf(token) };
}

/**
 * Password reset tokens, stored only as SHA-256 digests. A token resets once: consuming it is one
 * conditional update, so of two confirmations racing with one token exactly one succeeds.
 */
export function createResetTokens(deps: { storage: Storage; clock: Clock; ttlMs: number }) {
  const { storage, clock } = deps;
  const t = passwordResetTokens;
  const swept = new Map<string, number>();

  /** Voids every open token of the person (in `tx`) with this reason, but for `except`. */
  async function voidOpen(
    db: Database,
    orgId: string,
    personId: string,
    status: 'superseded' | 'password_changed',
    except?: string,
  ) {
    await db
      .update(t)
      .set({ status, settledAt: new Date(clock.now()) })
      .where(
        and(
          eq(t.orgId, orgId),
          eq(t.personId, personId),
          eq(t.status, 'open'),
          except ? ne(t.digest, except) : undefined,
        ),
      );
  }

  return {
    ttlMs: deps.ttlMs,

    /** When a token issued now expires. */
    expiresAt: () => clock.now() + deps.ttlMs,

    /**
     * Stores a token (made by `newResetToken`) for the person and handle, superseding the person's open
     * ones, in `tx`. False when this request already issued one (the request was delivered twice).
     */
    async issue(
      tx: Transaction,
      r: {
        requestId: string;
        orgId: string;
        personId: string;
        handle: PersonHandle;
        digest: string;
        expiresAt: number;
      },
    ): Promise<boolean> {
      const now = clock.now();
      const { digest, expiresAt } = r;
      const inserted = await tx.db
        .insert(t)
        .values({
          digest,
          requestId: r.requestId,
          orgId: r.orgId,
          personId: r.personId,
          handleType: r.handle.type,
          handleValue: r.handle.value,
          status: 'open',
          createdAt: new Date(now),
          expiresAt: new Date(expiresAt),
        })
        .onConflictDoNothing({ target: t.requestId })
        .returning({ digest: t.digest });
      if (inserted.length === 0) return false;
      await voidOpen(tx.db, r.orgId, r.personId, 'superseded', digest);
      if (now - (swept.get(r.orgId) ?? 0) > SWEEP_EVERY_MS) {
        if (swept.size >= 10_000) swept.clear();
        swept.set(r.orgId, now);
        await tx.db.delete(t).where(and(eq(t.orgId, r.orgId), lt(t.expiresAt, new Date(now - KEEP_MS))));
      }
      return true;
    },

    /** The open reset a token names (in `orgId`, when given), or why it resets nothing. */
    async find(token: string, orgId?: string): Promise<TokenLookup> {
      if (!TOKEN_SHAPE.test(token)) return { ok: false, refusal: 'unknown' };
      const [row] = await storage.db
        .select()
        .from(t)
        .where(and(eq(t.digest, await digestOf(token)), orgId ? eq(t.orgId, orgId) : undefined))
        .limit(1);
      if (!row) return { ok: false, refusal: 'unknown' };
      if (row.status !== 'open') return { ok: false, refusal: row.status as TokenRefusal };
      if (row.expiresAt.getTime() <= clock.now()) return { ok: false, refusal: 'expired' };
      return {
        ok: true,
        reset: {
          digest: row.digest,
          orgId: row.orgId,
          personId: row.personId,
          handle: { type: row.handleType as HandleType, value: row.handleValue },
          expiresAt: row.expiresAt.getTime(),
        },
      };
    },

    /**
     * Uses the token in `tx` if it is still open and unexpired, voiding the person's other open tokens;
     * false when another confirmation used it first (or it expired meanwhile).
     */
    async consume(tx: Transaction, reset: OpenReset): Promise<boolean> {
      const now = new Date(clock.now());
      const { digest } = reset;
      const used = await tx.db
        .update(t)
        .set({ status: 'used', settledAt: now })
        .where(and(eq(t.digest, digest), eq(t.status, 'open'), eq(t.orgId, reset.orgId)))
        .returning({ expiresAt: t.expiresAt });
      if (used.length === 0 || used[0]!.expiresAt.getTime() <= now.getTime()) return false;
      await voidOpen(tx.db, reset.orgId, reset.personId, 'password_changed', digest);
      return true;
    },

    /** The password changed another way (the admin API): the person's open tokens reset nothing now. */
    voidFor: (tx: Transaction, orgId: string, personId: string) =>
      voidOpen(tx.db, orgId, personId, 'password_changed'),
  };
}

export type ResetTokens = ReturnType<typeof createResetTokens>;
