import { createBatchLoader } from '../../core/batching/batch-loader.ts';
import type { OAuthClient } from '../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { ClientRow } from './schema.ts';
import { secretChecker } from './secrets.ts';
import type { ClientStore } from './store.ts';

/** The deployment's lifetimes for clients that set none. */
export interface LifetimeDefaults {
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
}

/** A client as the token endpoint holds it: the capability's view and its secret check. */
export interface KnownClient {
  client: OAuthClient;
  checkSecret: (secret: string) => Promise<boolean>;
}

/** Entries the cache holds at most; past it, it starts again empty (unknown IDs are cached too). */
const MAX_CACHED = 10_000;

export function clientOf(row: ClientRow, defaults: LifetimeDefaults): OAuthClient {
  return {
    orgId: row.orgId,
    clientId: row.clientId,
    name: row.name,
    type: row.public ? 'public' : 'confidential',
    grantTypes: row.grantTypes,
    redirectUris: row.redirectUris,
    scopes: row.scopes,
    accessTokenLifetime: row.accessTokenDuration ?? defaults.accessTokenSeconds,
    refreshTokenLifetime: row.refreshTokenDuration ?? defaults.refreshTokenSeconds,
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
}) {
  const { store, clock, defaults, ttlMs } = deps;
  const cache = new Map<string, { known: KnownClient | null; at: number }>();
  // A change forgotten while a load was in flight must not be put back by that load.
  let changes = 0;
  const loader = createBatchLoader(async (ids) => {
    const rows = await store.findMany(ids);
    return new Map(rows.map((r) => [r.clientId, r]));
  });

  async function load(clientId: string): Promise<KnownClient | null> {
    const at = clock.now();
    const seen = changes;
    const row = await loader.load(clientId);
    const known = row
      ? { client: clientOf(row, defaults), checkSecret: secretChecker(row.secretDigest) }
      : null;
    if (seen !== changes) return known;
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(clientId, { known, at });
    return known;
  }

  return {
    /** The client with this ID, or null; answered from memory while fresh. */
    get(clientId: string): KnownClient | null | Promise<KnownClient | null> {
      const hit = cache.get(clientId);
      if (hit && clock.now() - hit.at < ttlMs) return hit.known;
      return load(clientId);
    },
    forget(clientId: string): void {
      changes++;
      cache.delete(clientId);
    },
  };
}

export type ClientCache = ReturnType<typeof createClientCache>;
