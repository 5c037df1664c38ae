import { and, eq, gt, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { AccessTokenClaims } from '../../../core/capabilities/oauth2-server.ts';
import { arrayLiteral } from '../../../core/db/prepared.ts';
import type { Database } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeCodes, oauth2AuthorizeFamilies, oauth2AuthorizeRefreshTokens } from '../schema.ts';

/** An access token issued in a revoked family, as the server's revokeAccessTokens takes it. */
export type RevokedAccess = Pick<AccessTokenClaims, 'oid' | 'jti' | 'exp' | 'client_id'>;

/**
 * Revokes, at `at` (milliseconds since the epoch), every family the conditions select, and answers the
 * unexpired access tokens issued in them (beside their refresh tokens and by their codes' exchanges)
 * for the server to revoke too. A family revoked already keeps when it was, and its access tokens are
 * answered all the same: one recorded after its revocation (an exchange or a refresh that raced it) is
 * revoked by the next revocation that reaches the family. Run it in a transaction (`tx.db`) with the
 * server's revokeAccessTokens, so both go together.
 */
export async function revokeFamilies(
  db: Database,
  select: [SQL, ...SQL[]],
  at: number,
): Promise<RevokedAccess[]> {
  const f = oauth2AuthorizeFamilies;
  const r = oauth2AuthorizeRefreshTokens;
  const c = oauth2AuthorizeCodes;
  const nowS = Math.floor(at / 1000);
  // Locked in family order first, as a record's check takes its share locks (family-locks.ts), and
  // then named by these ids alone: a family begun after this statement is neither locked out of order
  // by the UPDATE nor revoked (it was not there to select). The ids go as one array parameter: a person
  // can hold more grants of a client than a statement has parameters (65,535).
  const ids = (
    await db
      .select({ familyId: f.familyId })
      .from(f)
      .where(and(...select))
      .orderBy(f.familyId)
      .for('no key update')
  ).map((row) => row.familyId);
  if (ids.length === 0) return [];
  const these = sql`${f.familyId} = any(${arrayLiteral(ids)}::uuid[])`;
  await db
    .update(f)
    .set({ revokedAt: at })
    .where(and(these, isNull(f.revokedAt)));
  // Sequential: one transaction is one connection.
  const refreshed = await db
    .select({ oid: f.orgId, client_id: f.clientId, jti: r.accessJti, exp: r.accessExp })
    .from(r)
    .innerJoin(f, eq(f.familyId, r.familyId))
    .where(and(these, gt(r.accessExp, nowS)));
  const coded = await db
    .select({ oid: f.orgId, client_id: f.clientId, jti: c.accessJti, exp: c.accessExp })
    .from(c)
    .innerJoin(f, eq(f.familyId, c.familyId))
    .where(and(these, isNotNull(c.accessJti), gt(c.accessExp, nowS)));
  const accesses = new Map<string, RevokedAccess>();
  for (const a of [...refreshed, ...coded])
    if (a.jti && a.exp) accesses.set(a.jti, { oid: a.oid, client_id: a.client_id, jti: a.jti, exp: a.exp });
  return [...accesses.values()];
}
