import { and, eq, sql } from 'drizzle-orm';
import { arrayLiteral } from '../../../core/db/prepared.ts';
import { isUuid } from '../../../core/ids.ts';

import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { BUCKET_NAME_RE, type BucketDefinition } from '../buckets.ts';
import { AttributeErrors } from '../errors.ts';
import type { PreparedAttribute } from '../limits.ts';
import { attributeBuckets } from '../schema.ts';
import { createBucketReads } from './batched-reads.ts';
import { createBatchedWrites } from './batched-writes.ts';
import { createCustomBuckets } from './custom-buckets.ts';
import { allNow, createSealing } from './sealing.ts';
import { type BucketRow, deleteNames, storedBytes, writeBucketsAlone, writeRow } from './statements.ts';

/** One bucket's part of a write: replace its set, merge into it, or delete names (null: all). */
export type BucketWrite =
  | { bucket: string; mode: 'replace' | 'merge'; attributes: PreparedAttribute[] }
  | { bucket: string; mode: 'delete'; names: string[] | null };

/** Attributes read back, by bucket; each bucket's entries in key order. */
export type BucketContents = Map<string, Array<[key: string, value: unknown]>>;

export interface AttributeStoreOptions {
  storage: Storage;
  secrets: SecretBox;
  clock: Clock;
  /** Buckets every organization has (standard and declared), by name. */
  fixed: ReadonlyMap<string, BucketDefinition>;
  maxAttributesPerBucket: number;
  /** Bytes a bucket's attributes may take as stored (names and sealed values, as JSON text). */
  maxBucketBytes: number;
  maxCustomBuckets: number;
  /** Bytes of opened values kept in memory, so a value read again is not opened again; 0: none. */
  openedValuesBytes?: number;
}

type WholeWrite = Extract<BucketWrite, { mode: 'replace' | 'merge' }>;
const isWhole = (w: BucketWrite): w is WholeWrite => w.mode !== 'delete';
/** Buckets are locked in name order, so two writes naming the same buckets cannot deadlock. */
const lockOrder = (a: BucketWrite, b: BucketWrite) =>
  a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0;

/**
 * Data access for attribute buckets, a row each holding its attributes. A request's writes are one
 * statement or one transaction, writing each bucket's row in name order (so two multi-bucket writes
 * cannot deadlock): writes to a bucket follow one another on the row's lock, a PUT leaves exactly its
 * own set, and a failure anywhere leaves nothing written.
 */
export function createAttributeStore(o: AttributeStoreOptions) {
  const { storage, secrets, clock, fixed } = o;
  const now = () => new Date(clock.now()).toISOString();
  const p = sql.placeholder;

  // Reads are the hot path: prepared once (a statement for all buckets, one for some).
  const selectRows = [false, true].map((byBucket) =>
    storage.db
      .select({
        bucket: attributeBuckets.name,
        attributes: sql<string>`${attributeBuckets.attributes}::text`,
      })
      .from(attributeBuckets)
      .where(
        and(
          eq(attributeBuckets.orgId, p('org')),
          byBucket ? sql`${attributeBuckets.name} = any(${p('buckets')}::text[])` : undefined,
        ),
      )
      .prepare(`attribute_rows_${Number(byBucket)}`),
  );
  const { selectCustom, lockCustom, absent, listBuckets, createBucket, deleteBucket } = createCustomBuckets({
    storage,
    fixed,
    maxCustomBuckets: o.maxCustomBuckets,
    now,
  });
  const { seal, plaintextOf } = createSealing(secrets, o.openedValuesBytes);

  /** One request's writes in the transaction given: each bucket locked (in lock order), then written. */
  async function writeOne(
    tx: Transaction,
    {
      orgId,
      writes,
      sealed,
    }: { orgId: string; writes: readonly BucketWrite[]; sealed: ReadonlyArray<readonly string[]> },
    at: string,
  ) {
    for (const [i, w] of writes.entries()) {
      // A custom bucket's row exists or the bucket does not; a standard bucket's row is made by its
      // first write. Either way the row's lock orders the writes to the bucket.
      if (!fixed.has(w.bucket)) await lockCustom(tx, orgId, w.bucket, at);
      if (w.mode === 'delete') {
        await deleteNames(tx.db, orgId, w.bucket, w.names === null ? null : arrayLiteral(w.names), at);
        continue;
      }
      const doc = JSON.stringify([writeRow(orgId, w.bucket, w.attributes, sealed[i]!)]);
      const [merged] = await writeBucketsAlone[w.mode](tx.db, doc, at);
      // A replace was checked before the transaction; a merge is checked with what the bucket held.
      if (merged) checkBucket(w.bucket, merged.n, merged.bytes);
    }
  }

  /** Refuses a bucket that would hold more attributes, or more bytes of them as stored, than it may. */
  function checkBucket(bucket: string, n: number, bytes: number) {
    if (n > o.maxAttributesPerBucket)
      throw AttributeErrors.BUCKET_FULL(
        `bucket ${bucket} would hold ${n} attributes; the limit is ${o.maxAttributesPerBucket} a bucket`,
      );
    if (bytes > o.maxBucketBytes)
      throw AttributeErrors.BUCKET_FULL(
        `bucket ${bucket} would hold ${bytes} bytes of sealed attributes; the limit is ${o.maxBucketBytes} bytes a bucket`,
      );
  }

  // Whole-bucket writes and reads of concurrent requests share statements (batched-writes.ts,
  // batched-reads.ts).
  const batched = createBatchedWrites({
    storage,
    fixed,
    maxAttributesPerBucket: o.maxAttributesPerBucket,
    maxBucketBytes: o.maxBucketBytes,
    now,
    writeOne,
  });
  const reads = createBucketReads(storage);

  return {
    /** The bucket every organization has under this name, if any. */
    fixedBucket: (name: string) => fixed.get(name),

    /** Applies the writes of one request atomically. Values are sealed before the transaction opens. */
    async write(orgId: string, writes: readonly BucketWrite[]): Promise<void> {
      const sorted = [...writes].sort(lockOrder);
      const sealing = sorted.map((w) => (w.mode === 'delete' ? [] : seal(orgId, w.bucket, w.attributes)));
      const sealed = allNow(sealing) ?? (await Promise.all(sealing));
      for (const [i, w] of sorted.entries())
        if (w.mode === 'replace')
          checkBucket(w.bucket, w.attributes.length, storedBytes(w.attributes, sealed[i]!));
      if (isUuid(orgId) && sorted.every(isWhole)) return batched.write({ orgId, writes: sorted, sealed });
      await storage.transaction((tx) => writeOne(tx, { orgId, writes: sorted, sealed }, now()));
    },

    /**
     * Reads buckets (null: every bucket of the organization). The attributes come from one statement, so
     * the answer is one snapshot across the buckets; custom buckets are checked after it, so a bucket
     * deleted meanwhile is a 404 rather than an empty bucket that never was.
     */
    async read(orgId: string, buckets: readonly string[] | null, names: readonly string[] | null) {
      for (const b of buckets ?? [])
        if (!fixed.has(b) && !BUCKET_NAME_RE.test(b)) throw AttributeErrors.BUCKET_NOT_FOUND(b);
      // Whole buckets (the common read) are batched with other requests' reads; the rest is read alone.
      const rows: BucketRow[] =
        buckets && isUuid(orgId)
          ? await reads.read(orgId.toLowerCase(), buckets)
          : await selectRows[buckets ? 1 : 0]!.execute({ org: orgId, buckets });
      const wanted = names ? new Set(names) : null;
      const customs = buckets ? buckets.filter((b) => !fixed.has(b)) : null;
      const found =
        customs?.length === 0
          ? []
          : await selectCustom[customs ? 1 : 0]!.execute({ org: orgId, buckets: customs });
      const out: BucketContents = new Map();
      for (const b of buckets ?? fixed.keys()) out.set(b, []);
      for (const c of found) out.set(c.name, []);
      for (const b of customs ?? []) if (!found.some((c) => c.name === b)) throw await absent(storage, b);
      const pending: Array<Promise<void>> = [];
      for (const row of rows) {
        const list = out.get(row.bucket);
        // Rows of a bucket the deployment no longer declares, or deleted meanwhile, are not shown.
        if (!list) continue;
        // JSON.parse defines own properties, so a name such as `__proto__` reads back as a name.
        const sealedByName: Record<string, string> = JSON.parse(row.attributes);
        for (const key of Object.keys(sealedByName).sort()) {
          if (wanted && !wanted.has(key)) continue;
          const entry: [string, unknown] = [key, null];
          list.push(entry);
          const plaintext = plaintextOf(orgId, row.bucket, key, sealedByName[key]!);
          if (typeof plaintext === 'string') entry[1] = JSON.parse(plaintext);
          else
            pending.push(
              plaintext.then((text) => {
                entry[1] = JSON.parse(text);
              }),
            );
        }
      }
      if (pending.length > 0) await Promise.all(pending);
      return out;
    },

    // A custom bucket's own operations (custom-buckets.ts).
    listBuckets,
    createBucket,
    deleteBucket,
  };
}

export type AttributeStore = ReturnType<typeof createAttributeStore>;
