import type { JSONWebKeySet } from 'jose';
import { OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import type { Logger } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { GuardedFetch } from '../../../core/ports/outbound-requests.ts';
import { publicJwkProblem } from './metadata.ts';

/** Options of the `jwks_uri` cache. */
export interface ClientKeySetOptions {
  /** The guarded fetch of clients' key sets (ctx.outbound.clientJwks). */
  fetch: GuardedFetch;
  clock: Clock;
  log: Logger;
  /** How long a fetched key set is used before it is fetched again. @default 300000 */
  ttlMs?: number;
  /** A key set is fetched again for an unknown kid at most this often. @default 10000 */
  refetchAfterMs?: number;
  /** Key sets kept at most; the oldest is dropped past it. @default 1000 */
  maxEntries?: number;
}

interface Entry {
  keys: Promise<JSONWebKeySet>;
  fetchedAt: number;
}

/**
 * Clients' key sets from their `jwks_uri`, through the address guard, kept for `ttlMs` on this replica.
 * A kid the cached set does not know is fetched again (the client rotated its keys), at most once per
 * `refetchAfterMs` per URI, so assertions with made-up kids cannot make the service hammer a host.
 * Keys with private members are left out of a fetched set; a failed fetch is not cached.
 */
export function createClientKeySets(options: ClientKeySetOptions) {
  const { clock, log } = options;
  const ttlMs = options.ttlMs ?? 300_000;
  const refetchAfterMs = options.refetchAfterMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 1000;
  const entries = new Map<string, Entry>();

  const load = async (uri: string): Promise<JSONWebKeySet> => {
    let res: Response;
    try {
      res = await options.fetch(uri, { headers: { accept: 'application/json' } });
    } catch (err) {
      log.warn("fetching a client's jwks_uri failed", { uri, err });
      throw unreachable();
    }
    let body: unknown;
    try {
      body = res.status === 200 ? await res.json() : undefined;
    } catch {
      body = undefined;
    }
    const keys = (body as { keys?: unknown } | undefined)?.keys;
    if (!Array.isArray(keys)) {
      log.warn("a client's jwks_uri answered no JWK Set", { uri, status: res.status });
      throw new OAuthError(
        'invalid_client',
        `the client's jwks_uri answered no JWK Set (HTTP ${res.status}; expected 200 and {"keys": [...]})`,
        401,
      );
    }
    return { keys: keys.filter((k) => publicJwkProblem(k) === undefined) as JSONWebKeySet['keys'] };
  };

  const fetchInto = (uri: string): Entry => {
    const entry: Entry = { keys: load(uri), fetchedAt: clock.now() };
    entries.delete(uri);
    entries.set(uri, entry);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    // A failure is answered to this request and forgotten, so the next one tries again.
    entry.keys.catch(() => {
      if (entries.get(uri) === entry) entries.delete(uri);
    });
    return entry;
  };

  return {
    /** The key set at `uri`: the cached one while fresh, else fetched. */
    get(uri: string): Promise<JSONWebKeySet> {
      const entry = entries.get(uri);
      if (entry && clock.now() - entry.fetchedAt < ttlMs) return entry.keys;
      return fetchInto(uri).keys;
    },
    /** The key set fetched again for a kid it lacked, or undefined when it was fetched too recently. */
    refetch(uri: string): Promise<JSONWebKeySet> | undefined {
      const entry = entries.get(uri);
      if (entry && clock.now() - entry.fetchedAt < refetchAfterMs) return undefined;
      return fetchInto(uri).keys;
    },
  };
}

export type ClientKeySets = ReturnType<typeof createClientKeySets>;

const unreachable = () =>
  new OAuthError(
    'invalid_client',
    "the client's jwks_uri could not be fetched (the service log has the reason)",
    401,
  );
