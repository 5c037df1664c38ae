import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { Family, FamilyStore } from '../store/families.ts';

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
