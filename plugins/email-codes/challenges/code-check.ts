import { constantTimeEqual } from '../../../core/ids.ts';
import { codeDigest } from './secrets.ts';
import type { Challenge, ChallengeStore } from './store.ts';

/** Why a challenge takes no code now, before the code is looked at; undefined when it may. */
export function closedReason(c: Challenge, now: number): 'expired' | 'used' | 'exhausted' | undefined {
  if (c.status === 'used') return 'used';
  if (c.status === 'exhausted') return 'exhausted';
  if (c.expiresAt <= now) return 'expired';
  return undefined;
}

/** A match; or a wrong code (counted), or a challenge another request closed meanwhile (`closed`). */
export type CodeCheck =
  | { ok: true }
  | { ok: false; closed: false; attempts: number; exhausted: boolean }
  | { ok: false; closed: true };

/**
 * Compares a code with a challenge's, in constant time. A challenge never sent (its handle named no
 * active person) has no code and refuses every one, counting the attempt like a real one, so that
 * neither the answers nor their count tell whether the handle names a person.
 */
export async function checkCode(
  store: ChallengeStore,
  challenge: Challenge,
  challengeId: string,
  code: string,
  maxAttempts: number,
): Promise<CodeCheck> {
  const given = new TextEncoder().encode(await codeDigest(challengeId, code));
  const stored = new TextEncoder().encode(challenge.secretDigest ?? '0'.repeat(given.length));
  const matched = constantTimeEqual(given, stored) && challenge.status === 'sent';
  if (matched) return { ok: true };
  const attempts = await store.recordWrongCode(challenge.digest, maxAttempts);
  if (attempts === 0) return { ok: false, closed: true };
  return { ok: false, closed: false, attempts, exhausted: attempts >= maxAttempts };
}
