import { eq, sql } from 'drizzle-orm';
import { createReplicaCache } from '../../../core/cache/replica-cache.ts';
import { bareHost, classifyAddress, isLocalhostName } from '../../../core/net/address.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { SdkErrors } from '../errors.ts';
import { sdkAllowedOrigins } from '../schema.ts';

/** How long a replica trusts what it read of the origins; a change on another replica counts within it. */
export const ORIGINS_CACHE_MS = 5000;

const isLoopbackHost = (hostname: string) =>
  isLocalhostName(hostname) || classifyAddress(bareHost(hostname))?.range === 'loopback';

const ORIGIN_RULE =
  'must be an origin as browsers send it: https://host[:port] (http only on localhost, 127.0.0.1 or [::1]), with no path, query, fragment, credentials or wildcard';

/**
 * The serialised origin `text` names (`https://App.Example.com:443/` is `https://app.example.com`), or
 * undefined when it is not an https origin (http on a loopback host): a path, a query, a fragment,
 * credentials or a wildcard make it none.
 */
export function originOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (/[?#*]/.test(trimmed)) return undefined;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  if (url.protocol === 'https:') return url.origin;
  return url.protocol === 'http:' && isLoopbackHost(url.hostname) ? url.origin : undefined;
}

/** The organization's origins checked and normalised, duplicates dropped; a 400 naming the first bad one. */
export function normaliseOrigins(list: readonly string[]): string[] {
  const out = list.map((text, i) => {
    const origin = originOf(text);
    if (!origin)
      throw SdkErrors.INVALID_ORIGIN(
        `body.allowed_origins[${i}]: ${ORIGIN_RULE} (got ${JSON.stringify(text)})`,
      );
    return origin;
  });
  return [...new Set(out)].sort();
}

/**
 * The organizations' allowed origins. Every SDK request reads them, and they change rarely, so a
 * replica keeps what it read for `cacheMs` (the API-key cache's bound) and forgets at once what it
 * changes itself.
 */
export function createOriginStore(storage: Storage, clock: Clock, cacheMs = ORIGINS_CACHE_MS) {
  const t = sdkAllowedOrigins;
  const byOrg = createReplicaCache<ReadonlySet<string>>({ clock, ttlMs: cacheMs });
  const anyOrg = createReplicaCache<boolean>({ clock, ttlMs: cacheMs });

  const readOrigins = (orgId: string) =>
    byOrg.get(orgId, async () => {
      const rows = await storage.db.select({ origin: t.origin }).from(t).where(eq(t.orgId, orgId));
      return new Set(rows.map((r) => r.origin));
    });

  return {
    /** The organization's origins, sorted. */
    async list(orgId: string): Promise<string[]> {
      return [...(await readOrigins(orgId))].sort();
    },

    /** Whether the organization allows this origin (as the Origin header sent it). */
    async allows(orgId: string, origin: string): Promise<boolean> {
      return (await readOrigins(orgId)).has(origin);
    },

    /** Whether any organization allows this origin: all a preflight can ask, since it names none. */
    anyAllows: async (origin: string): Promise<boolean> =>
      anyOrg.get(origin, async () => {
        const rows = await storage.db
          .select({ origin: t.origin })
          .from(t)
          .where(eq(t.origin, origin))
          .limit(1);
        return rows.length > 0;
      }),

    /** Replaces the organization's list (already normalised). */
    async set(orgId: string, origins: readonly string[]): Promise<void> {
      // Whatever any organization allows may change too: both caches are fenced and forgotten.
      await anyOrg.write(null, () =>
        byOrg.write(orgId, () =>
          storage.transaction(async (tx) => {
            // One writer per organization at a time: two replacements racing end as the later one, never
            // as a key conflict on the rows both insert.
            await tx.query(
              sql`select pg_advisory_xact_lock(hashtext('sdk_allowed_origins'), hashtext(${orgId}))`,
            );
            await tx.db.delete(t).where(eq(t.orgId, orgId));
            if (origins.length) await tx.db.insert(t).values(origins.map((origin) => ({ orgId, origin })));
          }),
        ),
      );
    },
  };
}

export type OriginStore = ReturnType<typeof createOriginStore>;
