import { and, gt, inArray, isNotNull, isNull, type SQL } from 'drizzle-orm';
import type { AccessTokenClaims } from '../../../core/capabilities/oauth2-server.ts';
import type { Database } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeCodes, oauth2AuthorizeFamilies, oauth2AuthorizeRefreshTokens } from '../schema.ts';

/** An access token issued in a revoked family, as the server's revokeAccessTokens takes it. */
export type RevokedAccess = Pick<AccessTokenClaims, 'oid' | 'jti' | 'exp' | 'client_id'>;

/**
 * Revokes, at `at` (milliseconds since the epoch), every family not yet revoked that `where` selects,
 * and answers the unexpired access tokens issued in them (beside their refresh tokens and by their
 * codes' exchanges) for the server to revoke too. Run it in a transaction (`tx.db`) so both go together.
 */
export async function revokeFamilies(
  db: Database,
  where: SQL | undefined,
  at: number,
): Promise<RevokedAccess[]> {
  const f = oauth2AuthorizeFamilies;
  const revoked = await db
    .update(f)
    .set({ revokedAt: at })
    .where(and(where, isNull(f.revokedAt)))
    .returning({ familyId: f.familyId, orgId: f.orgId, clientId: f.clientId });
  if (revoked.length === 0) return [];
  const familyOf = new Map(revoked.map((x) => [x.familyId, x]));
  const ids = [...familyOf.keys()];
  const nowS = Math.floor(at / 1000);
  const r = oauth2AuthorizeRefreshTokens;
  const c = oauth2AuthorizeCodes;
  // Sequential: one transaction is one connection.
  const refreshed = await db
    .select({ familyId: r.familyId, jti: r.accessJti, exp: r.accessExp })
    .from(r)
    .where(and(inArray(r.familyId, ids), gt(r.accessExp, nowS)));
  const coded = await db
    .select({ familyId: c.familyId, jti: c.accessJti, exp: c.accessExp })
    .from(c)
    .where(and(inArray(c.familyId, ids), isNotNull(c.accessJti), gt(c.accessExp, nowS)));
  const accesses = new Map<string, RevokedAccess>();
  for (const a of [...refreshed, ...coded]) {
    const family = familyOf.get(a.familyId);
    if (a.jti && a.exp && family)
      accesses.set(a.jti, { oid: family.orgId, client_id: family.clientId, jti: a.jti, exp: a.exp });
  }
  return [...accesses.values()];
}
