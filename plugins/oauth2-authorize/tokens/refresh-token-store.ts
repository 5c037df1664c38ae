import {
  type OAuth2Server,
  OAuthError,
  type OAuthTokenStore,
} from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { organizationAudience } from '../../../core/tokens/audience.ts';
import { REFRESH_PREFIX } from '../../oauth2/grants/index.ts';
import type { FamilyStore } from '../store/families.ts';
import type { ClientPersonRevoker, FamilyRevoker } from '../store/revoke-grants.ts';

/**
 * The refresh tokens as introspection (RFC 7662) and revocation (RFC 7009) see them. A token of another
 * organization is not this store's to answer for; one of a deleted client, or of a person disabled or
 * deleted, is inactive. Revoking a refresh token revokes its family: every refresh token of the grant and
 * the access tokens issued in it. Only its own client may revoke it. revokeAll revokes every family of a
 * client and person.
 */
export function createRefreshTokenStore(deps: {
  server: OAuth2Server;
  directory: PersonDirectory;
  families: FamilyStore;
  revokeFamily: FamilyRevoker;
  revokeAll: ClientPersonRevoker;
  clock: Clock;
  issuer: string;
}): OAuthTokenStore {
  const { families, clock } = deps;
  const find = (token: string) =>
    token.startsWith(REFRESH_PREFIX) ? families.findRefresh(token) : undefined;

  return {
    async introspect(client, token) {
      const found = await find(token);
      if (!found || found.family.orgId !== client.orgId) return undefined;
      const { family } = found;
      const now = clock.now();
      // Spent, expired or revoked: not active, which the endpoint answers as `{"active": false}`.
      if (family.revoked || found.expiresAt <= now || found.spentAt !== undefined) return undefined;
      // A deleted client's tokens are inactive, as its access tokens are (verifyAccessToken's rule), and
      // so are a disabled or deleted person's, which the refresh grant refuses (requireActivePerson).
      const [owner, person] = await Promise.all([
        deps.server.client(family.clientId),
        deps.directory.get(family.orgId, family.personId),
      ]);
      if (!owner || !person?.active) return undefined;
      return {
        active: true,
        token_type: 'refresh_token',
        client_id: family.clientId,
        scope: family.scope.join(' '),
        sub: family.personId,
        iss: owner.issuer,
        // The audience of the access tokens it refreshes: the grant's resource, else the organization's.
        aud: family.resource ?? organizationAudience(deps.issuer, family.orgId),
        iat: Math.floor(found.issuedAt / 1000),
        exp: Math.floor(found.expiresAt / 1000),
        auth_time: family.authTime,
      };
    },

    async revoke(client, token) {
      const found = await find(token);
      if (!found || found.family.orgId !== client.orgId) return false;
      // RFC 7009 §2.1: only the client the token was issued to may revoke it; another is refused.
      if (found.family.clientId !== client.clientId)
        throw new OAuthError('unauthorized_client', 'the token was issued to another client');
      await deps.revokeFamily(found.family);
      return true;
    },

    revokeAll: deps.revokeAll,
  };
}
