import { oauth2Server } from '../../core/capabilities/oauth2-server.ts';
import { personDirectory } from '../../core/capabilities/person-directory.ts';
import { tokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { analyticsReader } from '../../core/http/sign-in-context.ts';
import { definePlugin } from '../../core/plugin.ts';
import { createAssertionVerifier } from './clients/assertions.ts';
import { createClientCache, type LifetimeDefaults } from './clients/cache.ts';
import { createClientKeySets } from './clients/key-sets.ts';
import { createLastUsed } from './clients/last-used.ts';
import { clientRoutes } from './clients/routes.ts';
import { uiConfigurationRoutes } from './clients/ui-routes.ts';
import { createNonces } from './dpop/nonce.ts';
import { createProofReplayStore } from './dpop/replay.ts';
import { createDPoPChecker } from './dpop/server.ts';
import { clientCredentialsGrant } from './grants/client-credentials.ts';
import { tokenExchangeGrant } from './grants/token-exchange.ts';
import { migrations } from './migrations/index.ts';
import { type OAuth2Options, oauth2Settings } from './options.ts';
import { dynamicRegistrationRoutes } from './registration/index.ts';
import { createAssertionReplayStore } from './store/assertions.ts';
import { clientSecretsSealed, createClientStore } from './store/clients.ts';
import { createAccessTokens } from './tokens/access-tokens.ts';
import { tokenDirectRoutes, tokenEndpoints, tokenRoutes } from './tokens/routes.ts';
import { createOAuth2Server } from './tokens/server.ts';

export { createClient } from './clients/admin.ts';
export { authMethodOf } from './clients/metadata-rules.ts';
export { ClientCreateSchema } from './schema.ts';
export { createClientStore } from './store/clients.ts';

export type { OAuth2Options };

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`oauth2: ${name} must be an integer from ${min} to ${max} (got ${value})`);
  return value;
}

/**
 * The OAuth 2.0 authorization server's core: the organizations' clients (POST, GET, PATCH, DELETE
 * /oauth2/clients, a new secret), the token endpoint with client authentication and the
 * client_credentials and token exchange (RFC 8693) grants, RFC 9068 access tokens signed with the deployment's token keys,
 * introspection and revocation, and the oauth2Server capability through which other plugins add grants
 * (the authorization endpoint adds authorization_code and refresh_token, from grants/ with their stores).
 * Its folders: clients/ (the client API, cache, authentication, hosted-UI configuration), tokens/ (the
 * token endpoint, introspection, revocation, access tokens, the grant registry), grants/ (every grant),
 * store/ (clients and revoked access tokens), registration/ (dynamic registration, RFC 7591 and 7592:
 * initial access tokens, open registration, the registration and client configuration endpoints).
 *
 * @example
 * defineService({ plugins: [tokens(), oauth2({ accessTokenLifetimeSeconds: 900 })] })
 */
export const oauth2 = (options: OAuth2Options = {}) => {
  oauth2Settings.checkOptions(options);
  const cacheMs = checked('clientCacheMs', options.clientCacheMs ?? 5000, 0, 60_000);
  return definePlugin({
    id: 'oauth2',
    migrations,
    settings: oauth2Settings.schema,
    provides: { oauth2Server },
    // The tokens plugin publishes the keys that sign access tokens (/.well-known/jwks.json) and the
    // discovery document, without which no client or resource server can use them; the token exchange
    // grant validates identity tokens and runs the token_minted hook through it.
    requires: { tokens: tokenIssuer },
    setup(ctx, { tokens }) {
      const s = oauth2Settings.resolve(ctx.settings, options);
      const defaults: LifetimeDefaults = {
        accessTokenSeconds: s.OAUTH2_ACCESS_TOKEN_LIFETIME,
        refreshTokenSeconds: s.OAUTH2_REFRESH_TOKEN_LIFETIME,
      };
      const store = createClientStore({ storage: ctx.storage, clock: ctx.clock, secrets: ctx.secrets });
      const clients = createClientCache({
        store,
        clock: ctx.clock,
        defaults,
        ttlMs: cacheMs,
        publicBaseUrl: ctx.config.publicBaseUrl,
      });
      const accessTokens = createAccessTokens({
        signer: ctx.signer,
        issuer: ctx.config.publicBaseUrl,
        clock: ctx.clock,
        store,
        clients,
        defaults,
      });
      const dpop = createDPoPChecker({
        replay: createProofReplayStore({ storage: ctx.storage, clock: ctx.clock }),
        nonces: s.OAUTH2_DPOP_NONCE ? createNonces({ secrets: ctx.secrets, clock: ctx.clock }) : undefined,
        clock: ctx.clock,
        publicBaseUrl: ctx.config.publicBaseUrl,
      });
      const registry = createOAuth2Server({ clients, accessTokens, dpop });
      registry.server.addGrant(clientCredentialsGrant(accessTokens, ctx.config.publicBaseUrl));
      registry.server.addGrant(
        tokenExchangeGrant({
          server: registry.server,
          issuer: tokens,
          directory: () => ctx.capability(personDirectory),
          clock: ctx.clock,
          publicBaseUrl: ctx.config.publicBaseUrl,
        }),
      );
      const lastUsed = createLastUsed({ store, clock: ctx.clock, log: ctx.log });
      const log = ctx.log.child({ component: 'oauth2' });
      const assertions = createAssertionVerifier({
        clock: ctx.clock,
        secrets: ctx.secrets,
        keySets: createClientKeySets({ fetch: ctx.outbound.clientJwks, clock: ctx.clock, log }),
        replay: createAssertionReplayStore({ storage: ctx.storage, clock: ctx.clock, log }),
        issuer: ctx.config.publicBaseUrl,
      });
      const deps = {
        clients,
        assertions,
        registry,
        lastUsed,
        dpop,
        analyticsOf: analyticsReader(ctx.headers),
        log,
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
          .use(dynamicRegistrationRoutes(ctx, store, clients))
          .use(tokenRoutes(endpoints)),
        direct: tokenDirectRoutes(endpoints),
        workers: [lastUsed.worker],
        sealed: [clientSecretsSealed],
        provide: { oauth2Server: registry.server },
      };
    },
  });
};
