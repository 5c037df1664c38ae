import { and, eq, lte } from 'drizzle-orm';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeFamilies } from '../schema.ts';
import type { Family, FamilyStore } from '../store/families.ts';
import { revokeFamilies } from '../store/revoke-families.ts';

/**
 * Revokes a family and every unexpired access token issued in it: what a replayed code, a reused
 * refresh token and RFC 7009 revocation of a refresh token all do.
 */
export function createFamilyRevoker(server: OAuth2Server, families: FamilyStore) {
  return async function revokeFamily(family: Pick<Family, 'familyId' | 'orgId' | 'clientId'>): Promise<void> {
    const accesses = await families.revoke(family.familyId);
    await server.revokeAccessTokens(
      accesses.map((a) => ({ oid: family.orgId, client_id: family.clientId, jti: a.jti, exp: a.exp })),
    );
  };
}

export type FamilyRevoker = ReturnType<typeof createFamilyRevoker>;

/**
 * Revokes every family of (client, person) begun at or before `until`, as revokeFamily revokes one, in
 * one transaction: POST /oauth2/tokens/revoke-all. Another client's families, and another
 * organization's, are not selected.
 */
export function createClientPersonRevoker(deps: { server: OAuth2Server; storage: Storage; clock: Clock }) {
  const f = oauth2AuthorizeFamilies;
  return (client: OAuthClient, personId: string, until: number): Promise<void> =>
    deps.storage.transaction(async (tx) => {
      const selected = and(
        eq(f.orgId, client.orgId),
        eq(f.clientId, client.clientId),
        eq(f.personId, personId),
        lte(f.createdAt, until),
      );
      const accesses = await revokeFamilies(tx.db, selected, deps.clock.now());
      if (accesses.length > 0) await deps.server.revokeAccessTokens(accesses, { tx });
    });
}

export type ClientPersonRevoker = ReturnType<typeof createClientPersonRevoker>;
