import { and, eq } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { passkeyOfferDeclines } from '../schema.ts';

/**
 * How long a "Not now" keeps the hosted login from offering a passkey again: long enough not to ask at
 * every sign-in, short enough that a person who has since got a device for passkeys hears of them.
 */
export const OFFER_DECLINE_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * "Not now" to the hosted login's offer, remembered per person (not per browser): the offer is decided
 * on the server right after the sign-in, from the person alone, and a person who declined is not asked
 * again on each new browser, private window or device for OFFER_DECLINE_MS.
 */
export function createOfferDeclines(deps: { storage: Storage; clock: Clock }) {
  const t = passkeyOfferDeclines;
  return {
    /** Whether the person said "Not now" within OFFER_DECLINE_MS. */
    async recent(orgId: string, personId: string): Promise<boolean> {
      const [row] = await deps.storage.db
        .select({ at: t.declinedAt })
        .from(t)
        .where(and(eq(t.orgId, orgId), eq(t.personId, personId)))
        .limit(1);
      return row !== undefined && deps.clock.now() - row.at < OFFER_DECLINE_MS;
    },
    /** Records a "Not now" (now, replacing an older one). */
    async record(orgId: string, personId: string): Promise<void> {
      const declinedAt = deps.clock.now();
      await deps.storage.db
        .insert(t)
        .values({ orgId, personId, declinedAt })
        .onConflictDoUpdate({ target: [t.orgId, t.personId], set: { declinedAt } });
    },
  };
}

export type OfferDeclines = ReturnType<typeof createOfferDeclines>;
