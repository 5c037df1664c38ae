import { batchGate } from '../../core/batching/batch-gate.ts';
import { createBatchLoader } from '../../core/batching/batch-loader.ts';
import { batchingFor } from '../../core/batching/group-commit.ts';
import { arrayLiteral, prepared } from '../../core/db/prepared.ts';
import type { Storage, Transaction } from '../../core/ports/storage.ts';
import type { PreparedAttribute } from './limits.ts';

/** A row of the attributes table as the batched read gives it. */
export interface AttributeRow {
  bucket: string;
  key: string;
  value: string;
}

/** One request's write of whole buckets (replace or merge), its values sealed, buckets in lock order. */
export interface BucketsWrite {
  orgId: string;
  writes: ReadonlyArray<{ bucket: string; mode: 'replace' | 'merge'; attributes: PreparedAttribute[] }>;
  sealed: ReadonlyArray<readonly string[]>;
}

// The batch's statements: arrays of (organization, bucket) pairs and of (organization, bucket, key,
// value) rows, so that one statement serves every request of the batch and its text never changes.
//
// Every read of the attributes table goes through a lateral subquery per pair, fenced with OFFSET 0 so
// the planner cannot fold it into a join: that keeps it an index lookup by (org_id, bucket). PGlite never
// analyses a table (there is no autovacuum), and on a join its default estimates choose a hash join over
// a scan of the whole table.

const PAIRS = (o: string, b: string) => `unnest(${o}::uuid[], ${b}::text[]) as r(o, b)`;
const ROWS_OF_PAIR = `lateral (select ctid, org_id, bucket, key, value from attributes
    where org_id = r.o and bucket = r.b offset 0) a`;
const SENT = 'unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) as s(o, b, k, v)';

/**
 * How long a batch waits for a row lock held elsewhere: past it the batch fails, and its requests are
 * written one by one, each waiting only for its own locks (see `run`). Set by the lock statements
 * themselves, before their first row (a filter of a volatile function runs for every row, ahead of its
 * insert or update), so it costs no statement of its own.
 */
const LOCK_TIMEOUT_MS = 50;
const SET_LOCK_TIMEOUT = `set_config('lock_timeout', '${LOCK_TIMEOUT_MS}ms', true) is not null`;

const lockFixedBuckets = prepared(
  'attributes_lock_fixed_many',
  `insert into attribute_buckets (org_id, name, custom, version, created_at, updated_at)
   select o, b, false, 1, $3, $3 from ${PAIRS('$1', '$2')} where ${SET_LOCK_TIMEOUT}
   on conflict (org_id, name) do update set version = attribute_buckets.version + 1, updated_at = excluded.updated_at`,
);

const lockCustomBuckets = prepared<{ one: number }>(
  'attributes_lock_custom_many',
  `update attribute_buckets set version = version + 1, updated_at = $3
   where ctid = any(array(select (select ctid from attribute_buckets
     where org_id = r.o and name = r.b and custom offset 0) from ${PAIRS('$1', '$2')} where ${SET_LOCK_TIMEOUT}))
   returning 1 as one`,
);

const UPSERT_SENT = `up as (
    insert into attributes (org_id, bucket, key, value, updated_at)
    select o, b, k, v, $7 from ${SENT}
    on conflict (org_id, bucket, key) do update set value = excluded.value, updated_at = excluded.updated_at
  )`;

/**
 * Replace: upsert the keys sent to each bucket, delete its others (both see one snapshot, on disjoint
 * keys). The keys sent are one hashed set, probed once a row.
 */
const replaceBuckets = prepared(
  'attributes_replace_many',
  `with ${UPSERT_SENT},
   gone as (delete from attributes where ctid = any(array(
     select a.ctid from ${PAIRS('$5', '$6')}, ${ROWS_OF_PAIR}
     where (a.org_id, a.bucket, a.key) not in (select o, b, k from ${SENT}))))
   select 1 as one`,
);

/** Merge: upsert the keys sent; each bucket's count afterwards is its rows plus the keys sent that were not. */
const mergeBuckets = prepared<{ n: number }>(
  'attributes_merge_many',
  `with ${UPSERT_SENT},
   fresh as materialized (select o, b, count(*) filter (where not exists (select 1 from attributes
       where org_id = s.o and bucket = s.b and key = s.k offset 0)) as n
     from ${SENT} group by o, b)
   select ((select count(*) from attributes where org_id = r.o and bucket = r.b offset 0)
     + coalesce((select f.n from fresh f where f.o = r.o and f.b = r.b), 0))::int as n
   from ${PAIRS('$5', '$6')}`,
);

/** Every attribute of the given (organization, bucket) pairs, in one statement: one snapshot. */
const selectBuckets = prepared<AttributeRow & { org_id: string }>(
  // Unnamed, so planned for its values (see core/db/prepared.ts); its arrays go as text, one round trip.
  null,
  `select a.org_id::text as org_id, a.bucket, a.key, a.value from ${PAIRS('$1', '$2')}, ${ROWS_OF_PAIR}
   order by a.bucket, a.key`,
);

const pairKey = (orgId: string, bucket: string) => `${orgId} ${bucket}`;
const byPair = (o1: string, b1: string, o2: string, b2: string) =>
  o1 < o2 ? -1 : o1 > o2 ? 1 : b1 < b2 ? -1 : b1 > b2 ? 1 : 0;

/** Rows (attributes, and a lock a bucket) one batch writes at most: a bounded transaction. */
const MAX_BATCH_ROWS = 2000;

/**
 * Reads of whole buckets that arrive together, answered by one statement. A request's buckets are one
 * key of the batch, so they are read in the same statement (one snapshot) even when the batch is split.
 */
export function createBucketReads(storage: Storage) {
  const loader = createBatchLoader<Map<string, AttributeRow[]>>(
    async (keys) => {
      const asked = keys.map((k) => JSON.parse(k) as [string, string[]]);
      const pairs = new Map<string, [string, string]>();
      for (const [orgId, buckets] of asked) for (const b of buckets) pairs.set(pairKey(orgId, b), [orgId, b]);
      const list = [...pairs.values()];
      const rows = await selectBuckets(
        storage.db,
        arrayLiteral(list.map(([o]) => o)),
        arrayLiteral(list.map(([, b]) => b)),
      );
      const byPair = new Map<string, AttributeRow[]>();
      for (const r of rows) {
        const k = pairKey(r.org_id, r.bucket);
        const row = { bucket: r.bucket, key: r.key, value: r.value };
        const found = byPair.get(k);
        if (found) found.push(row);
        else byPair.set(k, [row]);
      }
      return new Map(
        keys.map((key, i) => {
          const [orgId, buckets] = asked[i]!;
          return [key, new Map(buckets.map((b) => [b, byPair.get(pairKey(orgId, b)) ?? []]))];
        }),
      );
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  const gate = batchGate(storage);
  return {
    /** The rows of these buckets of the organization (an ID in lower case), by bucket, in key order. */
    async read(orgId: string, buckets: readonly string[]): Promise<AttributeRow[]> {
      await gate();
      const found = await loader.load(JSON.stringify([orgId, buckets]));
      return [...new Set(buckets)].flatMap((b) => found!.get(b) ?? []);
    },
  };
}

/**
 * Whole-bucket writes of concurrent requests in one transaction: BEGIN, COMMIT and each statement's
 * overhead are paid once for the batch, whose statements each serve all its requests.
 * A request that finds a slot free is written at once, alone, as without batching; requests that
 * arrive while every slot is busy (one on PGlite, a few on a pool) form the next batch.
 *
 * A request's buckets are locked and written in the batch's statements; a request that touches a
 * bucket an earlier one in the batch touched goes in a later round, so writes to one bucket still apply
 * in order. When anything in a batch fails (a custom bucket missing, a bucket over its limit, a row
 * lock held elsewhere past LOCK_TIMEOUT_MS on a pool), each of its requests is written alone with
 * `writeOne`, so each gets its own answer and waits only for its own locks.
 */
export function createBatchedWrites(o: {
  storage: Storage;
  fixed: ReadonlyMap<string, unknown>;
  maxAttributesPerBucket: number;
  now: () => string;
  writeOne: (tx: Transaction, item: BucketsWrite, at: string) => Promise<void>;
}) {
  async function writeRound(tx: Transaction, round: BucketsWrite[], at: string) {
    const fixed: [string[], string[]] = [[], []];
    const custom: [string[], string[]] = [[], []];
    const rows = { replace: [[], [], [], []] as string[][], merge: [[], [], [], []] as string[][] };
    const buckets = { replace: [[], []] as string[][], merge: [[], []] as string[][] };
    // Bucket rows are locked in one order, (organization, bucket), so that two batches cannot deadlock.
    const entries = round
      .flatMap((item) => item.writes.map((w, i) => ({ item, w, i })))
      .sort((a, b) => byPair(a.item.orgId, a.w.bucket, b.item.orgId, b.w.bucket));
    for (const { item, w, i } of entries) {
      const lock = o.fixed.has(w.bucket) ? fixed : custom;
      lock[0].push(item.orgId);
      lock[1].push(w.bucket);
      buckets[w.mode][0]!.push(item.orgId);
      buckets[w.mode][1]!.push(w.bucket);
      const [os, bs, ks, vs] = rows[w.mode] as [string[], string[], string[], string[]];
      for (const [j, a] of w.attributes.entries()) {
        os.push(item.orgId);
        bs.push(w.bucket);
        ks.push(a.key);
        vs.push(item.sealed[i]![j]!);
      }
    }
    // One after the other: postgres.js does not reliably settle statements pipelined in a transaction.
    if (fixed[0].length) await lockFixedBuckets(tx.db, ...fixed, at);
    if (custom[0].length) {
      const locked = await lockCustomBuckets(tx.db, ...custom, at);
      if (locked.length !== custom[0].length) throw new Error('a custom bucket of the batch is missing');
    }
    if (buckets.replace[0]!.length) await replaceBuckets(tx.db, ...rows.replace, ...buckets.replace, at);
    if (buckets.merge[0]!.length) {
      const counts = await mergeBuckets(tx.db, ...rows.merge, ...buckets.merge, at);
      if (counts.some((c) => c.n > o.maxAttributesPerBucket))
        throw new Error('a bucket of the batch would pass its limit');
    }
  }

  async function writeBatch(tx: Transaction, items: BucketsWrite[]) {
    const at = o.now();
    const rounds: BucketsWrite[][] = [];
    const lastRound = new Map<string, number>();
    for (const item of items) {
      let r = 0;
      for (const w of item.writes) r = Math.max(r, (lastRound.get(pairKey(item.orgId, w.bucket)) ?? -1) + 1);
      for (const w of item.writes) lastRound.set(pairKey(item.orgId, w.bucket), r);
      const round = rounds[r];
      if (round) round.push(item);
      else rounds[r] = [item];
    }
    for (const round of rounds) await writeRound(tx, round, at);
  }

  const alone = (item: BucketsWrite) => o.storage.transaction((tx) => o.writeOne(tx, item, o.now()));

  type Waiting = { item: BucketsWrite; resolve: () => void; reject: (e: unknown) => void };
  let queue: Waiting[] = [];
  let active = 0;
  let scheduled = false;
  const maxActive = batchingFor(o.storage).concurrency;

  /** Takes the queue's head up to MAX_BATCH_ROWS rows (at least one request). */
  function take(): Waiting[] {
    let end = 0;
    let rows = 0;
    for (; end < queue.length; end++) {
      rows += queue[end]!.item.writes.reduce((n, w) => n + w.attributes.length + 1, 0);
      if (end > 0 && rows > MAX_BATCH_ROWS) break;
    }
    const batch = queue.slice(0, end);
    queue = queue.slice(end);
    return batch;
  }

  /**
   * Writes a batch; what it cannot write together is written request by request. On a pool even a
   * batch of one goes through `writeBatch`, for its lock timeout: a request whose bucket is locked
   * elsewhere must not keep a slot, and the requests queued behind it, waiting.
   */
  async function run(batch: Waiting[]) {
    const pool = o.storage.writeConcurrency > 1;
    if (batch.length > 1 || pool) {
      try {
        await o.storage.transaction((tx) =>
          writeBatch(
            tx,
            batch.map((b) => b.item),
          ),
        );
        for (const b of batch) b.resolve();
        return;
      } catch {
        // Something in the batch failed (a bucket missing or full, a lock held too long): each request
        // is written alone and gets its own answer.
      }
    }
    const each = batch.map((b) => alone(b.item).then(b.resolve, b.reject));
    // On a pool they do not hold the slot, so one waiting for a lock does not hold the next batch too.
    // On one connection they run one after another anyway, and the next batch forms meanwhile.
    if (!pool) await Promise.all(each);
  }

  /**
   * Starts batches while fewer than `maxActive` run. A request that finds a free slot is written at
   * once (a batch of one, as without batching); those that arrive while every slot is busy go together
   * in the next batch. The start waits one microtask, so the requests released by one gate go together.
   */
  function pump() {
    if (scheduled || active >= maxActive || queue.length === 0) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      while (active < maxActive && queue.length > 0) {
        active++;
        void run(take()).finally(() => {
          active--;
          pump();
        });
      }
    });
  }

  const gate = batchGate(o.storage);
  return {
    /** Resolves once the request's write has committed, in its own transaction or in a batch's. */
    async write(item: BucketsWrite): Promise<void> {
      await gate();
      await new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      });
    },
  };
}
