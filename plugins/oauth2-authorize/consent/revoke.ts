import { eq, inArray } from 'drizzle-orm';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { oauth2AuthorizeFamilies } from '../schema.ts';
import { revokeGrants } from '../store/revoke-grants.ts';
import type { OAuth2ConsentStore } from './store.ts';

const f = oauth2AuthorizeFamilies;

/**
 * Withdrawing a consent: the person's consent to one client (or to every client without `clientId`)
 * goes, and with it, in the same transaction, every grant (token family) the person holds for those
 * clients and the access tokens issued in them, as revoke-all revokes them. An application whose
 * consent is withdrawn keeps no refresh token, and its next authorization asks again (prompt=none:
 * consent_required). Answers the clients whose consent went; none: nothing was revoked.
 */
export function createOAuth2ConsentRevoker(deps: {
  storage: Storage;
  clock: Clock;
  server: OAuth2Server;
  consents: OAuth2ConsentStore;
}) {
  return (orgId: string, personId: string, clientId?: string): Promise<string[]> =>
    deps.storage.transaction(async (tx) => {
      const gone = await deps.consents.revoke(orgId, personId, clientId, { tx });
      if (gone.length > 0)
        await revokeGrants(
          deps.server,
          tx,
          [eq(f.orgId, orgId), eq(f.personId, personId), inArray(f.clientId, gone)],
          deps.clock.now(),
        );
      return gone;
    });
}

export type OAuth2ConsentRevoker = ReturnType<typeof createOAuth2ConsentRevoker>;
