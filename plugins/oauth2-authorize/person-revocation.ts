import { and, eq, gt, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { OAuth2Server } from '../../core/capabilities/oauth2-server.ts';
import { revokePersonTokens } from '../../core/tokens/revoke-person-tokens.ts';
import { oauth2AuthorizeCodes, oauth2AuthorizeFamilies, oauth2AuthorizeRefreshTokens } from './schema.ts';

/**
 * The authorization server's part of revokePersonTokens (a password reset): every grant the person
 * holds is revoked, in the reset's transaction, as a refresh-token reuse revokes one: its refresh
 * tokens answer invalid_grant, a code not yet exchanged gives nothing, and the unexpired access tokens
 * issued in it are revoked. The grants are those the transaction sees: made before the reset commits.
 */
export const revokePersonGrants = (server: OAuth2Server) =>
  revokePersonTokens.attach({
    async run({ orgId, personId, before, tx }) {
      const f = oauth2AuthorizeFamilies;
      const revoked = await tx.db
        .update(f)
        .set({ revokedAt: before })
        .where(and(eq(f.orgId, orgId), eq(f.personId, personId), isNull(f.revokedAt)))
        .returning({ familyId: f.familyId, clientId: f.clientId });
      if (revoked.length === 0) return;
      const clientOf = new Map(revoked.map((x) => [x.familyId, x.clientId]));
      const ids = [...clientOf.keys()];
      const nowS = Math.floor(before / 1000);
      const r = oauth2AuthorizeRefreshTokens;
      const c = oauth2AuthorizeCodes;
      // Sequential: one transaction is one connection.
      const refreshed = await tx.db
        .select({ familyId: r.familyId, jti: r.accessJti, exp: r.accessExp })
        .from(r)
        .where(and(inArray(r.familyId, ids), gt(r.accessExp, nowS)));
      const coded = await tx.db
        .select({ familyId: c.familyId, jti: c.accessJti, exp: c.accessExp })
        .from(c)
        .where(and(inArray(c.familyId, ids), isNotNull(c.accessJti), gt(c.accessExp, nowS)));
      const accesses = new Map<string, { oid: string; client_id: string; jti: string; exp: number }>();
      for (const a of [...refreshed, ...coded]) {
        const clientId = clientOf.get(a.familyId);
        if (a.jti && a.exp && clientId)
          accesses.set(a.jti, { oid: orgId, client_id: clientId, jti: a.jti, exp: a.exp });
      }
      await server.revokeAccessTokens([...accesses.values()], { tx });
    },
  });
