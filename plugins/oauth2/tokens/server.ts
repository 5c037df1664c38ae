import type {
  OAuth2Server,
  OAuthClient,
  OAuthDeviceAuthorization,
  OAuthGrant,
  OAuthPushedAuthorization,
  OAuthTokenStore,
} from '../../../core/capabilities/oauth2-server.ts';
import type { ClientCache } from '../clients/cache.ts';
import type { DPoPChecker } from '../dpop/server.ts';
import type { AccessTokens } from './access-tokens.ts';

/**
 * The oauth2Server capability: clients by ID, access-token signing and verification, and the registries
 * of grants and opaque-token stores that the endpoints dispatch to.
 */
export function createOAuth2Server(deps: {
  clients: ClientCache;
  accessTokens: AccessTokens;
  dpop: DPoPChecker;
}) {
  const { clients, accessTokens, dpop } = deps;
  const grants = new Map<string, OAuthGrant>();
  const tokenStores: OAuthTokenStore[] = [];
  const device: { handler?: OAuthDeviceAuthorization } = {};
  const pushed: { handler?: OAuthPushedAuthorization } = {};

  const server: OAuth2Server = {
    async client(clientId: string): Promise<OAuthClient | undefined> {
      return (await clients.get(clientId))?.client;
    },
    signAccessToken: (request) => accessTokens.sign(request),
    verifyAccessToken: (token) => accessTokens.verify(token),
    revokeAccessTokens: (tokens, options) => accessTokens.revoke(tokens, options?.tx),
    checkDPoPProof: (request, o) => dpop.answer(request, o),
    addGrant(grant) {
      if (grants.has(grant.type))
        throw new Error(`oauth2: a handler of the ${grant.type} grant is registered twice`);
      grants.set(grant.type, grant);
    },
    setDeviceAuthorization(handler) {
      if (device.handler) throw new Error('oauth2: a device authorization handler is registered twice');
      device.handler = handler;
    },
    setPushedAuthorization(handler) {
      if (pushed.handler) throw new Error('oauth2: a pushed authorization handler is registered twice');
      pushed.handler = handler;
    },
    addTokenStore(store) {
      tokenStores.push(store);
    },
  };
  return { server, grants, tokenStores, device, pushed };
}

export type OAuth2Registry = ReturnType<typeof createOAuth2Server>;
