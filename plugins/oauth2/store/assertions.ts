import { lt, sql } from 'drizzle-orm';
import { sha256, toHex } from '../../../core/ids.ts';
import type { Logger } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2ClientAssertions } from '../schema.ts';

/** Expired rows are swept at most this often, by the replica that records an assertion. */
const SWEEP_EVERY_MS = 60_000;

/**
 * The jtis of client assertions already used (RFC 7523 §3: each is accepted once), in the database so
 * that every replica sees them. A row lives until the assertion's exp, past which the assertion is
 * refused anyway; a jti whose row has expired may be used again.
 */
export function createAssertionReplayStore(deps: { storage: Storage; clock: Clock; log: Logger }) {
  const { storage, clock, log } = deps;
  const db = storage.db;
  let sweptAt = 0;
  const sweep = (now: number) => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    db.delete(oauth2ClientAssertions)
      .where(lt(oauth2ClientAssertions.expiresAt, now))
      .then(
        () => undefined,
        (err: unknown) => log.warn('sweeping used client assertions failed', { err }),
      );
  };

  return {
    /** Records the assertion's jti; false when it was used before and has not expired. */
    async firstUse(clientId: string, jti: string, expiresAtMs: number): Promise<boolean> {
      const now = clock.now();
      const jtiHash = toHex(await sha256(`${clientId}\n${jti}`));
      // A row left by an expired assertion is taken over; a live one makes the insert a no-op.
      const rows = await db
        .insert(oauth2ClientAssertions)
        .values({ jtiHash, expiresAt: expiresAtMs })
        .onConflictDoUpdate({
          target: oauth2ClientAssertions.jtiHash,
          set: { expiresAt: sql`excluded.expires_at` },
          where: lt(oauth2ClientAssertions.expiresAt, now),
        })
        .returning({ jtiHash: oauth2ClientAssertions.jtiHash });
      sweep(now);
      return rows.length === 1;
    },
  };
}

export type AssertionReplayStore = ReturnType<typeof createAssertionReplayStore>;
