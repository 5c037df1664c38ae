import type { Clock } from '../ports/clock.ts';

/**
 * What a replica remembers of rarely-changed rows that hot paths read (an organization's settings, a
 * client): a value is trusted for `ttlMs` (a change made on another replica counts within it), and a
 * change made through this cache is seen at once here. A load that overlapped a change is answered but
 * not kept, so it can never put the old value back.
 */
export interface ReplicaCache<V> {
  /** The remembered value while fresh (synchronously), else `load(key)`, kept unless a change overlapped it. */
  get(key: string, load: (key: string) => Promise<V>): V | Promise<V>;
  /** Forgets `key`, or every key when none is given, and voids the loads in flight. */
  forget(key?: string): void;
  /**
   * Runs a write that changes `key` (every key when null): loads that overlap it are not kept, and the
   * key is forgotten once it ends, also when it fails (whether it was written is then unknown).
   */
  write<T>(key: string | null, run: () => Promise<T>): Promise<T>;
}

/**
 * Makes a replica cache holding at most `max` keys (past it, it starts again empty).
 *
 * @example
 * const claims = createReplicaCache<string>({ clock: ctx.clock, ttlMs: 5000 });
 * const name = await claims.get(orgId, readClaimName);
 * await claims.write(orgId, () => storeClaimName(orgId, 'teams'));
 */
export function createReplicaCache<V>(o: { clock: Clock; ttlMs: number; max?: number }): ReplicaCache<V> {
  const max = o.max ?? 10_000;
  const entries = new Map<string, { value: V; at: number }>();
  // Bumped by every change: a load that began before one may hold the old value.
  let changes = 0;

  async function load(key: string, read: (key: string) => Promise<V>): Promise<V> {
    const at = o.clock.now();
    const seen = changes;
    const value = await read(key);
    if (seen !== changes) return value;
    if (entries.size >= max) entries.clear();
    entries.set(key, { value, at });
    return value;
  }

  const forget = (key?: string) => {
    changes++;
    if (key === undefined) entries.clear();
    else entries.delete(key);
  };

  return {
    get(key, read) {
      const hit = entries.get(key);
      if (hit && o.clock.now() - hit.at < o.ttlMs) return hit.value;
      return load(key, read);
    },
    forget,
    async write(key, run) {
      changes++;
      try {
        return await run();
      } finally {
        forget(key ?? undefined);
      }
    },
  };
}
