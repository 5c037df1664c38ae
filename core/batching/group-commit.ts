import type { Storage, Transaction } from '../ports/storage.ts';

export interface GroupCommitOptions<T, R> {
  storage: Storage;
  /** Writes a batch; returns one result per item, in order. */
  write(tx: Transaction, items: T[]): Promise<R[]>;
  /**
   * Run `write` inside a transaction. Without one, `write` must be a single statement (atomic on its
   * own), which saves the BEGIN and COMMIT round trips. @default true
   */
  transaction?: boolean;
  /** Items written per batch at most. @default 512 */
  maxBatch?: number;
  /** The weight of an item (rows it writes, say); a batch stops before `maxWeight`. @default 1 each */
  weigh?: (item: T) => number;
  /** Total weight of a batch at most (a heavier item goes alone). @default Infinity */
  maxWeight?: number;
  /**
   * How long the first item of a batch waits for others before the write starts. On PGlite every
   * statement runs on the event loop's thread, so while a write runs nothing else arrives: a short
   * wait is what lets batches form there. @default 0
   */
  lingerMs?: number;
  /**
   * Writes in flight at once. More than one suits a connection pool (Postgres): an item then waits for
   * a free connection rather than for the whole batch before it. @default 1
   */
  concurrency?: number;
}

type Waiting<T, R> = { item: T; resolve: (r: R) => void; reject: (e: unknown) => void };

/**
 * Group commit: callers add items and wait; items that arrive while a write runs (or while the first
 * one lingers) are written together by the next one. One commit then serves many callers, so a hot
 * path that must see its write committed is not bounded by one commit each (about a thousand a second
 * on Postgres). When a batch fails, its items are written one by one, so only the item at fault fails.
 *
 * @example
 * const attempts = createGroupCommit<Attempt>({
 *   storage,
 *   write: async (tx, items) => { await tx.db.insert(attemptsTable).values(items); return items.map(() => undefined); },
 *   ...batchingFor(storage),
 * });
 * await attempts.add(attempt); // resolves once its batch has committed
 */
export function createGroupCommit<T, R = void>(options: GroupCommitOptions<T, R>) {
  const { storage } = options;
  const maxBatch = options.maxBatch ?? 512;
  const maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const weigh = (item: T) => options.weigh?.(item) ?? 1;
  let queue: Waiting<T, R>[] = [];
  /** The total weight of the queue. */
  let queued = 0;
  let active = 0;
  const idle: Array<() => void> = [];

  const run = (items: T[]): Promise<R[]> => {
    if (options.transaction !== false) return storage.transaction((tx) => options.write(tx, items));
    const hooks: Array<() => void> = [];
    const autocommit: Transaction = {
      db: storage.db,
      query: (statement) => storage.query(statement),
      afterCommit: (fn) => void hooks.push(fn),
    };
    return options.write(autocommit, items).then((results) => {
      for (const hook of hooks) hook();
      return results;
    });
  };

  function take(): Waiting<T, R>[] {
    let end = 0;
    let weight = 0;
    while (end < queue.length && end < maxBatch) {
      const w = weigh(queue[end]!.item);
      if (end > 0 && weight + w > maxWeight) break;
      weight += w;
      end++;
    }
    queued -= weight;
    const batch = queue.slice(0, end);
    queue = queue.slice(end);
    return batch;
  }

  async function write(linger: boolean): Promise<void> {
    // Items added in the same tick (the continuations of one batch of loads, say) join this batch.
    if (linger && options.lingerMs) await new Promise((r) => setTimeout(r, options.lingerMs));
    else await Promise.resolve();
    const batch = take();
    if (batch.length === 0) return;
    try {
      const results = await run(batch.map((b) => b.item));
      for (const [i, b] of batch.entries()) b.resolve(results[i] as R);
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // One bad item must not fail the others again and again: write each alone.
      for (const b of batch) {
        try {
          b.resolve((await run([b.item]))[0] as R);
        } catch (e) {
          b.reject(e);
        }
      }
    }
  }

  /** More than one batch waits: what the running writers' next batch would leave behind. */
  const backlog = () => queue.length > maxBatch || queued > maxWeight;

  /**
   * Starts writers while there is work and room; items queued behind a write go without lingering. A
   * second writer starts only for a backlog of more than one batch: otherwise the running writer's next
   * batch takes every waiting item at once, and one statement costs the database less than several
   * small ones (measured on Postgres: a quarter more deliveries a second than writers started for any
   * waiting item).
   */
  function kick(linger: boolean) {
    while (active < concurrency && queue.length > 0 && (active === 0 || backlog())) {
      active++;
      void write(linger).finally(() => {
        active--;
        if (queue.length > 0) kick(false);
        else if (active === 0) for (const done of idle.splice(0)) done();
      });
      if (linger && options.lingerMs) break; // one lingering writer gathers the batch
    }
  }

  return {
    /** Resolves once the item's write has committed. */
    add(item: T): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        queued += weigh(item);
        if (active < concurrency) kick(active === 0);
      });
    },
    /** Waits until every item added so far is written (or failed). */
    flush(): Promise<void> {
      if (active === 0 && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}

export type GroupCommit<T, R = void> = ReturnType<typeof createGroupCommit<T, R>>;

/** How batches are tuned for a storage. */
export interface Batching {
  /** How long the first item of a batch waits for others, in milliseconds. */
  lingerMs: number;
  /** Writes (or loads) in flight at once. */
  concurrency: number;
}

/**
 * Batch tuning for a storage, from its `writeConcurrency`. A single connection runs one statement at a
 * time on this thread: one writer, and a 2 ms linger so batches form. A pool gets a few writers at once
 * (at most 4: more small statements cost the database more than fewer larger ones) and no linger, so
 * an item never waits for a whole batch.
 *
 * @example createGroupCommit({ storage, write, ...batchingFor(storage) })
 */
export const batchingFor = (storage: Pick<Storage, 'writeConcurrency'>): Batching =>
  storage.writeConcurrency <= 1
    ? { lingerMs: 2, concurrency: 1 }
    : { lingerMs: 0, concurrency: Math.min(4, storage.writeConcurrency) };
