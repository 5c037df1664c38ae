import { eq } from 'drizzle-orm';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import { revokePersonTokens } from '../../../core/tokens/revoke-person-tokens.ts';
import { oauth2AuthorizeFamilies } from '../schema.ts';
import { revokeGrants } from './revoke-grants.ts';

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
      await revokeGrants(server, tx, [eq(f.orgId, orgId), eq(f.personId, personId)], before);
    },
  });
