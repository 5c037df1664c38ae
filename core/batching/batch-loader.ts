type Waiter<V> = { resolve: (v: V | undefined) => void; reject: (e: unknown) => void };

/**
 * Batches lookups: keys asked for in the same tick, or while every query slot is busy, are answered by
 * the next single query. Hundreds of concurrent handlers then cost a few queries instead of one each,
 * which is what matters on PGlite's single connection and on a busy Postgres pool alike. `load` answers
 * the keys it found; a key missing from its map resolves to undefined, and a failed query rejects every
 * caller of that batch.
 *
 * @example
 * const users = createBatchLoader(async (ids) => new Map((await selectUsers(ids)).map((u) => [u.id, u])),
 *   { concurrency: batchingFor(storage).concurrency });
 * const user = await users.load(id); // undefined when there is none
 */
export function createBatchLoader<V>(
  load: (keys: string[]) => Promise<Map<string, V>>,
  options: { maxBatch?: number /** Queries in flight at once. @default 1 */; concurrency?: number } = {},
) {
  const maxBatch = options.maxBatch ?? 256;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const waiting = new Map<string, Waiter<V>[]>();
  let active = 0;

  async function once(): Promise<void> {
    await Promise.resolve(); // the rest of this tick's keys join
    const batch = new Map<string, Waiter<V>[]>();
    for (const [key, callers] of waiting) {
      if (batch.size >= maxBatch) break;
      batch.set(key, callers);
    }
    for (const key of batch.keys()) waiting.delete(key);
    if (batch.size === 0) return;
    try {
      const found = await load([...batch.keys()]);
      for (const [key, callers] of batch) for (const c of callers) c.resolve(found.get(key));
    } catch (err) {
      for (const callers of batch.values()) for (const c of callers) c.reject(err);
    }
  }

  function kick() {
    // A second query starts only for more keys than one query takes (see createGroupCommit's kick).
    if (active >= concurrency || waiting.size === 0 || (active > 0 && waiting.size <= maxBatch)) return;
    active++;
    void once().finally(() => {
      active--;
      kick();
    });
  }

  return {
    load(key: string): Promise<V | undefined> {
      return new Promise((resolve, reject) => {
        const callers = waiting.get(key);
        if (callers) callers.push({ resolve, reject });
        else waiting.set(key, [{ resolve, reject }]);
        kick();
      });
    },
  };
}
