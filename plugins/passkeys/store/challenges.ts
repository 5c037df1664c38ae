import { and, eq, lt } from 'drizzle-orm';
import { base64url, isUuid, uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { passkeyChallenges } from '../schema.ts';

/** What a challenge was made for. */
export type ChallengePurpose = 'registration' | 'sign_in' | 'second_factor';

/** An open challenge, as `take` hands it back once. */
export interface OpenChallenge {
  challengeId: string;
  purpose: ChallengePurpose;
  /** The person it is bound to; null for a sign-in without a handle, or with one that names nobody. */
  personId: string | null;
  /** A sign-in whose options named a handle: only that handle's person may answer it. */
  forHandle: boolean;
  /** base64url, as the options carried it. */
  challenge: string;
}

/** Why `take` found no challenge to answer. */
export type ChallengeRefusal = 'unknown' | 'expired';

/**
 * WebAuthn challenges: 32 random bytes each, stored with what they are for, answered at most once. A
 * ceremony takes its challenge (deleting the row) before it verifies anything, so a replayed or racing
 * answer finds nothing, whether the first one verified or not.
 */
export function createChallengeStore(deps: { storage: Storage; clock: Clock; ttlMs: number }) {
  const { storage, clock, ttlMs } = deps;
  const t = passkeyChallenges;

  return {
    /** A new challenge bound as given; its ID and the base64url challenge the options carry. */
    async open(
      orgId: string,
      purpose: ChallengePurpose,
      bound: { personId?: string | null; forHandle?: boolean } = {},
    ): Promise<{ challengeId: string; challenge: string }> {
      const now = clock.now();
      // Expired rows are swept as new ones come, so the table holds about one TTL's worth.
      await storage.db.delete(t).where(lt(t.expiresAt, now));
      const challengeId = uuidv7(now);
      const challenge = base64url(crypto.getRandomValues(new Uint8Array(32)));
      await storage.db.insert(t).values({
        challengeId,
        orgId,
        purpose,
        personId: bound.personId ?? null,
        forHandle: bound.forHandle ?? false,
        challenge,
        createdAt: now,
        expiresAt: now + ttlMs,
      });
      return { challengeId, challenge };
    },

    /** Takes (deletes) an open challenge of this organization and purpose, or says why there is none. */
    async take(
      orgId: string,
      purpose: ChallengePurpose,
      challengeId: string,
    ): Promise<{ ok: true; challenge: OpenChallenge } | { ok: false; reason: ChallengeRefusal }> {
      if (!isUuid(challengeId)) return { ok: false, reason: 'unknown' };
      const rows = await storage.db
        .delete(t)
        .where(and(eq(t.challengeId, challengeId), eq(t.orgId, orgId), eq(t.purpose, purpose)))
        .returning();
      const row = rows[0];
      if (!row) return { ok: false, reason: 'unknown' };
      if (row.expiresAt <= clock.now()) return { ok: false, reason: 'expired' };
      return {
        ok: true,
        challenge: {
          challengeId: row.challengeId,
          purpose,
          personId: row.personId,
          forHandle: row.forHandle,
          challenge: row.challenge,
        },
      };
    },
  };
}

export type ChallengeStore = ReturnType<typeof createChallengeStore>;

/** What a refused challenge_id is told, naming the field. */
export const challengeRefusalText = (reason: ChallengeRefusal, what: string) =>
  reason === 'expired'
    ? `challenge_id: the ${what} challenge has expired; ask for new options`
    : `challenge_id: names no open ${what} challenge of this organization (each is answered once); ask for new options`;
