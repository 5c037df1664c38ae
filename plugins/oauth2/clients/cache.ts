import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { createReplicaCache } from '../../../core/cache/replica-cache.ts';
import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { organizationIssuer } from '../../../core/tokens/issuers.ts';
import type { ClientRow } from '../schema.ts';
import type { ClientStore } from '../store/clients.ts';
import type { TokenEndpointAuthMethod } from './metadata.ts';
import { authMethodOf } from './metadata-rules.ts';
import { secretChecker } from './secrets.ts';

/** The deployment's lifetimes for clients that set none. */
export interface LifetimeDefaults {
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
}

/** A client as the token endpoint holds it: the capability's view and its secret check. */
export interface KnownClient {
  client: OAuthClient;
  /** Whether the secret is the client's: at once for a secret that matched before, else once hashed. */
  checkSecret: (secret: string) => boolean | Promise<boolean>;
  /** How it must authenticate, and what its assertions (RFC 7523) are verified with. */
  auth: ClientAuth;
}

/** A client's registered authentication method and its assertion keys. */
export interface ClientAuth {
  method: TokenEndpointAuthMethod;
  jwks: { keys: Record<string, unknown>[] } | null;
  jwksUri: string | null;
  /** A client_secret_jwt client's secret, sealed (see store/clients.ts clientSecretContext). */
  secretSealed: string | null;
}

const authOf = (row: ClientRow): ClientAuth => ({
  method: authMethodOf(row),
  jwks: row.jwks,
  jwksUri: row.jwksUri,
  secretSealed: row.secretSealed,
});

export function toOAuthClient(
  row: ClientRow,
  defaults: LifetimeDefaults,
  publicBaseUrl: string,
): OAuthClient {
  return {
    orgId: row.orgId,
    clientId: row.clientId,
    name: row.name,
    type: row.public ? 'public' : 'confidential',
    grantTypes: row.grantTypes,
    redirectUris: row.redirectUris,
    scopes: row.scopes,
    resources: row.resources,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    ...(row.backchannelLogoutUri !== null ? { backchannelLogoutUri: row.backchannelLogoutUri } : {}),
    backchannelLogoutSessionRequired: row.backchannelLogoutSessionRequired,
    firstParty: row.firstParty,
    requirePushedAuthorizationRequests: row.requirePushedAuthorizationRequests,
    accessTokenLifetime: row.accessTokenDuration ?? defaults.accessTokenSeconds,
    refreshTokenLifetime: row.refreshTokenDuration ?? defaults.refreshTokenSeconds,
    ui: row.uiConfiguration ?? {},
    issuer: row.organizationIssuer ? organizationIssuer(publicBaseUrl, row.orgId) : publicBaseUrl,
    dpopBoundAccessTokens: row.dpopBoundAccessTokens,
  };
}

/**
 * Clients by ID for the token endpoint, cached for `ttlMs` so a grant costs no query: a change made on
 * this replica (PATCH, DELETE, a new secret) is forgotten at once, one made on another replica is seen
 * within `ttlMs`. Unknown IDs are cached too, so made-up client IDs cost no query each; concurrent misses
 * share one query.
 */
export function createClientCache(deps: {
  store: ClientStore;
  clock: Clock;
  defaults: LifetimeDefaults;
  ttlMs: number;
  /** PUBLIC_BASE_URL: the deployment's issuer, and the root of every organization's. */
  publicBaseUrl: string;
}) {
  const { store, clock, defaults, ttlMs, publicBaseUrl } = deps;
  const cache = createReplicaCache<KnownClient | null>({ clock, ttlMs });
  const loader = createBatchLoader(async (ids) => {
    const rows = await store.findMany(ids);
    return new Map(rows.map((r) => [r.clientId, r]));
  });
  const load = async (clientId: string): Promise<KnownClient | null> => {
    const row = await loader.load(clientId);
    return row
      ? {
          client: toOAuthClient(row, defaults, publicBaseUrl),
          checkSecret: secretChecker(row.secretDigest),
          auth: authOf(row),
        }
      : null;
  };

  return {
    /** The client with this ID, or null; answered from memory while fresh. */
    get: (clientId: string): KnownClient | null | Promise<KnownClient | null> => cache.get(clientId, load),
    /** Forgets a client this replica changed (PATCH, DELETE, a new secret, its UI configuration). */
    forget: (clientId: string): void => cache.forget(clientId),
  };
}

export type ClientCache = ReturnType<typeof createClientCache>;
