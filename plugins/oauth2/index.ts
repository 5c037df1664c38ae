import * as v from 'valibot';
import { oauth2Server } from '../../core/capabilities/oauth2-server.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { envInteger } from '../../core/contract/settings.ts';
import { analyticsReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createClientCache, type LifetimeDefaults } from './clients/cache.ts';
import { createLastUsed } from './clients/last-used.ts';
import { clientRoutes } from './clients/routes.ts';
import { uiConfigurationRoutes } from './clients/ui-routes.ts';
import { clientCredentialsGrant } from './grants/client-credentials.ts';
import { migrations } from './migrations/index.ts';
import { MAX_ACCESS_TOKEN_SECONDS, MAX_REFRESH_TOKEN_SECONDS } from './schema.ts';
import { createClientStore } from './store/clients.ts';
import { createAccessTokens } from './tokens/access-tokens.ts';
import { tokenDirectRoutes, tokenEndpoints, tokenRoutes } from './tokens/routes.ts';
import { createOAuth2Server } from './tokens/server.ts';

export { createClient } from './clients/admin.ts';
export { ClientCreateSchema } from './schema.ts';
export { createClientStore } from './store/clients.ts';

export interface OAuth2Options {
  /** Access-token lifetime in seconds for clients that set none; OAUTH2_ACCESS_TOKEN_LIFETIME wins. @default 3600 */
  accessTokenLifetimeSeconds?: number;
  /** Refresh-token lifetime in seconds for clients that set none; OAUTH2_REFRESH_TOKEN_LIFETIME wins. @default 864000 */
  refreshTokenLifetimeSeconds?: number;
  /**
   * How long a replica trusts its cached view of a client: a change made on another replica (a new
   * secret, a deleted client) takes this long to be seen there. @default 5000
   */
  clientCacheMs?: number;
}

const settings = v.object({
  OAUTH2_ACCESS_TOKEN_LIFETIME: envInteger('OAUTH2_ACCESS_TOKEN_LIFETIME', {
    min: 60,
    max: MAX_ACCESS_TOKEN_SECONDS,
  }),
  OAUTH2_REFRESH_TOKEN_LIFETIME: envInteger('OAUTH2_REFRESH_TOKEN_LIFETIME', {
    min: 60,
    max: MAX_REFRESH_TOKEN_SECONDS,
  }),
});

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`oauth2: ${name} must be an integer from ${min} to ${max} (got ${value})`);
  return value;
}

/**
 * The OAuth 2.0 authorization server's core: the organizations' clients (POST, GET, PATCH, DELETE
 * /oauth2/clients, a new secret), the token endpoint with client authentication and the
 * client_credentials grant, RFC 9068 access tokens signed with the deployment's token keys,
 * introspection and revocation, and the oauth2Server capability through which other plugins add grants
 * (the authorization endpoint adds authorization_code and refresh_token, from grants/ with their stores).
 * Its folders: clients/ (the client API, cache, authentication, hosted-UI configuration), tokens/ (the
 * token endpoint, introspection, revocation, access tokens, the grant registry), grants/ (every grant),
 * store/ (clients and revoked access tokens).
 *
 * @example
 * defineService({ plugins: [tokens(), oauth2({ accessTokenLifetimeSeconds: 900 })] })
 */
export const oauth2 = (options: OAuth2Options = {}) => {
  const access = checked(
    'accessTokenLifetimeSeconds',
    options.accessTokenLifetimeSeconds ?? 3600,
    60,
    MAX_ACCESS_TOKEN_SECONDS,
  );
  const refresh = checked(
    'refreshTokenLifetimeSeconds',
    options.refreshTokenLifetimeSeconds ?? 864_000,
    60,
    MAX_REFRESH_TOKEN_SECONDS,
  );
  const cacheMs = checked('clientCacheMs', options.clientCacheMs ?? 5000, 0, 60_000);
  return definePlugin({
    id: 'oauth2',
    migrations,
    settings,
    provides: { oauth2Server },
    // Not called: the tokens plugin publishes the keys that sign access tokens (/.well-known/jwks.json)
    // and the discovery document, without which no client or resource server can use them.
    requires: { tokens: tokenIssuer },
    setup(ctx) {
      const defaults: LifetimeDefaults = {
        accessTokenSeconds: ctx.settings.OAUTH2_ACCESS_TOKEN_LIFETIME ?? access,
        refreshTokenSeconds: ctx.settings.OAUTH2_REFRESH_TOKEN_LIFETIME ?? refresh,
      };
      const store = createClientStore({ storage: ctx.storage, clock: ctx.clock });
      const clients = createClientCache({ store, clock: ctx.clock, defaults, ttlMs: cacheMs });
      const accessTokens = createAccessTokens({
        signer: ctx.signer,
        issuer: ctx.config.publicBaseUrl,
        clock: ctx.clock,
        store,
        clients,
        defaults,
      });
      const registry = createOAuth2Server({ clients, accessTokens });
      registry.server.addGrant(clientCredentialsGrant(accessTokens, ctx.config.publicBaseUrl));
      const lastUsed = createLastUsed({ store, clock: ctx.clock, log: ctx.log });
      const deps = {
        clients,
        registry,
        lastUsed,
        analyticsOf: analyticsReader(ctx.headers),
        log: ctx.log.child({ component: 'oauth2' }),
        issued: ctx.metrics.counter({
          name: 'identity_oauth2_tokens_issued_total',
          help: 'Access tokens the OAuth 2.0 token endpoint issued, by grant type',
          labelNames: ['grant_type'],
        }),
      };
      // Optional and read at each introspection: the persons plugin may be set up after this one.
      const endpoints = tokenEndpoints(deps, accessTokens, () => ctx.capability(personDirectory), ctx.clock);
      return {
        routes: clientRoutes(ctx, store, clients, defaults)
          .use(uiConfigurationRoutes(ctx, store, clients))
          .use(tokenRoutes(endpoints)),
        direct: tokenDirectRoutes(endpoints),
        workers: [lastUsed.worker],
        provide: { oauth2Server: registry.server },
      };
    },
  });
};
