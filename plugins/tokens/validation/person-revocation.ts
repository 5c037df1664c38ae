import { sql } from 'drizzle-orm';
import { UUID_PATTERN } from '../../../core/ids.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { revokePersonTokens } from '../../../core/tokens/revoke-person-tokens.ts';
import { tokensPersonCutoffs } from '../schema.ts';

/**
 * When a token was issued, in milliseconds: from its jti when that is a UUID v7 (the issuer's, whose
 * first 48 bits are the time), else from iat (seconds; tokens issued before jti carried the time).
 */
export function issuedAtMs(claims: Record<string, JsonValue>): number {
  const jti = claims.jti;
  if (typeof jti === 'string' && UUID_PATTERN.test(jti) && jti[14] === '7')
    return Number.parseInt(jti.slice(0, 8) + jti.slice(9, 13), 16);
  return typeof claims.iat === 'number' ? claims.iat * 1000 : 0;
}

/**
 * The tokens plugin's part of revokePersonTokens: the person's cutoff moves to `before` (never back), in
 * the caller's transaction; validation refuses the person's tokens issued earlier.
 */
export const revokeEarlierTokens = revokePersonTokens.attach({
  async run({ orgId, personId, before, tx }) {
    const at = new Date(before);
    await tx.db
      .insert(tokensPersonCutoffs)
      .values({ orgId, personId, revokedBefore: at })
      .onConflictDoUpdate({
        target: [tokensPersonCutoffs.orgId, tokensPersonCutoffs.personId],
        set: { revokedBefore: sql`greatest(${tokensPersonCutoffs.revokedBefore}, excluded.revoked_before)` },
      });
  },
});
