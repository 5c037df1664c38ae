import { lt } from 'drizzle-orm';
import { batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import { base64url, sha256 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2DpopProofs } from '../schema.ts';

/** Expired rows are deleted at most this often by a replica (the sweep rides on a later write). */
const SWEEP_EVERY_MS = 60_000;

interface Seen {
  proofKey: string;
  expiresAt: number;
}

/**
 * The DPoP proofs seen, in the database so every replica sees them (RFC 9449 §11.1): a proof's `jti`
 * is taken once per key until its `iat` leaves the window. Proofs arriving together share one INSERT
 * (group commit), so a burst of grants costs one commit.
 */
export function createProofReplayStore(deps: { storage: Storage; clock: Clock }) {
  const { storage, clock } = deps;
  const t = oauth2DpopProofs;
  let lastSweep = 0;
  const inserts = createGroupCommit<Seen, boolean>({
    storage,
    transaction: false,
    ...batchingFor(storage),
    async write(tx, rows) {
      const unique = [...new Map(rows.map((r) => [r.proofKey, r])).values()];
      const taken = await tx.db
        .insert(t)
        .values(unique)
        .onConflictDoNothing()
        .returning({ proofKey: t.proofKey });
      // A key twice in one batch: its first item wins, as it would have in two statements.
      const won = new Set(taken.map((r) => r.proofKey));
      return rows.map((r) => won.delete(r.proofKey));
    },
  });

  async function sweep(now: number) {
    if (now - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = now;
    await storage.db.delete(t).where(lt(t.expiresAt, now));
  }

  return {
    /**
     * Records the proof; true the first time its key's thumbprint and jti are seen, false for a replay.
     * `until`: milliseconds since the epoch after which the proof is refused anyway (its iat too old).
     */
    async firstUse(jkt: string, jti: string, until: number): Promise<boolean> {
      const proofKey = base64url(await sha256(`${jkt}.${jti}`));
      const first = await inserts.add({ proofKey, expiresAt: until });
      void sweep(clock.now()).catch(() => {
        // A failed sweep is retried by a later one: the rows only cost space meanwhile.
        lastSweep = 0;
      });
      return first;
    },
  };
}

export type ProofReplayStore = ReturnType<typeof createProofReplayStore>;
