import { eq, lte, type SQL } from 'drizzle-orm';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeFamilies } from '../schema.ts';
import type { Family } from './families.ts';
import { revokeFamilies } from './revoke-families.ts';

const f = oauth2AuthorizeFamilies;

/**
 * The one way token families are revoked: every family meeting all the conditions, and every
 * unexpired access token issued in them, in `tx`, at `at` (milliseconds since the epoch). A family
 * revoked already has its access tokens revoked again (a no-op for those revoked then), so one recorded
 * in it since (an exchange or a refresh that raced the revocation) is revoked too. What a replayed
 * code, a reused refresh token, RFC 7009 revocation, POST /oauth2/tokens/revoke-all and a password
 * reset all do.
 */
export async function revokeGrants(
  server: OAuth2Server,
  tx: Transaction,
  select: [SQL, ...SQL[]],
  at: number,
): Promise<void> {
  const accesses = await revokeFamilies(tx.db, select, at);
  if (accesses.length > 0) await server.revokeAccessTokens(accesses, { tx });
}

type RevokerDeps = { server: OAuth2Server; storage: Storage; clock: Clock };

/**
 * Revokes a family and every unexpired access token issued in it, in one transaction: what a replayed
 * code, a reused refresh token and RFC 7009 revocation of a refresh token all do.
 */
export function createFamilyRevoker(deps: RevokerDeps) {
  return (family: Pick<Family, 'familyId'>): Promise<void> =>
    deps.storage.transaction((tx) =>
      revokeGrants(deps.server, tx, [eq(f.familyId, family.familyId)], deps.clock.now()),
    );
}

export type FamilyRevoker = ReturnType<typeof createFamilyRevoker>;

/**
 * Revokes every family of (client, person) begun at or before `until`, as revokeFamily revokes one, in
 * one transaction: POST /oauth2/tokens/revoke-all. Another client's families, and another
 * organization's, are not selected.
 */
export function createClientPersonRevoker(deps: RevokerDeps) {
  return (client: OAuthClient, personId: string, until: number): Promise<void> =>
    deps.storage.transaction((tx) =>
      revokeGrants(
        deps.server,
        tx,
        [
          eq(f.orgId, client.orgId),
          eq(f.clientId, client.clientId),
          eq(f.personId, personId),
          lte(f.createdAt, until),
        ],
        deps.clock.now(),
      ),
    );
}

export type ClientPersonRevoker = ReturnType<typeof createClientPersonRevoker>;
