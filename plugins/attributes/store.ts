import { and, eq, sql } from 'drizzle-orm';
import { prepared } from '../../core/db/prepared.ts';
import type { SealedColumn } from '../../core/db/reseal.ts';
import { isUuid } from '../../core/ids.ts';

import type { Clock } from '../../core/ports/clock.ts';
import { type SecretBox, SecretBoxError } from '../../core/ports/secret-box.ts';
import type { Storage, Transaction } from '../../core/ports/storage.ts';
import { type AttributeRow, createBatchedWrites, createBucketReads } from './batches.ts';
import {
  BUCKET_NAME_RE,
  type BucketDefinition,
  customNameProblem,
  type EndUserPermissions,
} from './buckets.ts';
import { AttributeErrors } from './errors.ts';
import type { PreparedAttribute } from './limits.ts';
import { createOpenedValues } from './opened-values.ts';
import { attributeBuckets, attributes } from './schema.ts';

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
  maxCustomBuckets: number;
  /** Bytes of opened values kept in memory, so a value read again is not opened again; 0: none. */
  openedValuesBytes?: number;
}

/** The values, when none of them is a promise (sealed at once); undefined otherwise. */
function allNow<T>(values: ReadonlyArray<T | Promise<T>>): T[] | undefined {
  const out: T[] = [];
  for (const v of values) {
    if (v instanceof Promise) return undefined;
    out.push(v);
  }
  return out;
}

/** Binds a sealed value to its place, so a value copied to another organization, bucket or key does not open. */
const contextOf = (orgId: string, bucket: string, key: string) => `attributes:${orgId}:${bucket}:${key}`;

/** The attribute values, for `secrets reseal`. */
export const attributesSealed: SealedColumn = {
  name: 'attributes.value',
  table: 'attributes',
  keys: ['org_id', 'bucket', 'key'],
  column: 'value',
  context: (row) => contextOf(row.org_id!, row.bucket!, row.key!),
};

// The write path's statements, of fixed text (prepared once per connection on Postgres: one round trip
// each instead of two, and no parse and plan per write).

/** Locks a standard bucket's row, made on its first write (an upsert locks the row it inserts or updates). */
const lockFixedBucket = prepared<{ one: number }>(
  'attributes_lock_fixed',
  `insert into attribute_buckets (org_id, name, custom, version, created_at, updated_at)
   values ($1, $2, false, 1, $3, $3)
   on conflict (org_id, name) do update set version = attribute_buckets.version + 1, updated_at = excluded.updated_at
   returning 1 as one`,
);

/** Locks a custom bucket's row; no row: the bucket does not exist in this organization. */
const lockCustomBucket = prepared<{ one: number }>(
  'attributes_lock_custom',
  `update attribute_buckets set version = version + 1, updated_at = $3
   where org_id = $1 and name = $2 and custom returning 1 as one`,
);

const UPSERT_SENT = `up as (
    insert into attributes (org_id, bucket, key, value, updated_at)
    select $1, $2, k, v, $5 from unnest($3::text[], $4::text[]) as t(k, v)
    on conflict (org_id, bucket, key) do update set value = excluded.value, updated_at = excluded.updated_at
  )`;

/** Replace: upsert the keys sent, delete the others; the bucket then holds exactly what was sent. */
const replaceBucket = prepared<{ n: number }>(
  'attributes_replace',
  `with ${UPSERT_SENT},
   gone as (delete from attributes where org_id = $1 and bucket = $2 and key <> all($3::text[]))
   select cardinality($3::text[])::int as n`,
);

/**
 * Merge: upsert the keys sent; count the bucket afterwards. Every statement in WITH sees the snapshot
 * before any of them: the rows there, plus the keys sent that were not.
 */
const mergeBucket = prepared<{ n: number }>(
  'attributes_merge',
  `with ${UPSERT_SENT}
   select ((select count(*) from attributes where org_id = $1 and bucket = $2)
     + (select count(*) from unnest($3::text[]) as s(k) where not exists (select 1 from attributes a
         where a.org_id = $1 and a.bucket = $2 and a.key = s.k)))::int as n`,
);

type WholeWrite = Extract<BucketWrite, { mode: 'replace' | 'merge' }>;
const isWhole = (w: BucketWrite): w is WholeWrite => w.mode !== 'delete';
/** Buckets are locked in name order, so two writes naming the same buckets cannot deadlock. */
const lockOrder = (a: BucketWrite, b: BucketWrite) =>
  a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0;

const customBucket = (name: string, endUserPermissions: EndUserPermissions): BucketDefinition => ({
  name,
  sharingScope: 'organization',
  endUserPermissions,
  organizationAccess: 'read_write',
  standard: false,
});

/**
 * Data access for attribute buckets. Every write runs in one transaction that first locks the row of
 * each bucket it touches (in name order, so two multi-bucket writes cannot deadlock): writes to a bucket
 * follow one another, a PUT leaves exactly its own set, and a failure anywhere leaves nothing written.
 */
export function createAttributeStore(o: AttributeStoreOptions) {
  const { storage, secrets, clock, fixed } = o;
  const now = () => new Date(clock.now()).toISOString();
  const p = sql.placeholder;

  // Reads are the hot path: prepared once (a statement per filter combination, so each gets its own plan).
  const selectAttributes = [false, true].map((byBucket) =>
    [false, true].map((byKey) =>
      storage.db
        .select({ bucket: attributes.bucket, key: attributes.key, value: attributes.value })
        .from(attributes)
        .where(
          and(
            eq(attributes.orgId, p('org')),
            byBucket ? sql`${attributes.bucket} = any(${p('buckets')}::text[])` : undefined,
            byKey ? sql`${attributes.key} = any(${p('names')}::text[])` : undefined,
          ),
        )
        .orderBy(attributes.bucket, attributes.key)
        .prepare(`attributes_read_${Number(byBucket)}${Number(byKey)}`),
    ),
  );
  const selectCustom = [false, true].map((byName) =>
    storage.db
      .select({ name: attributeBuckets.name, endUserPermissions: attributeBuckets.endUserPermissions })
      .from(attributeBuckets)
      .where(
        and(
          eq(attributeBuckets.orgId, p('org')),
          eq(attributeBuckets.custom, true),
          byName ? sql`${attributeBuckets.name} = any(${p('buckets')}::text[])` : undefined,
        ),
      )
      .orderBy(attributeBuckets.name)
      .prepare(`attribute_buckets_custom_${Number(byName)}`),
  );

  /**
   * Locks the bucket's row for the rest of the transaction. A standard bucket's row is made on its first
   * write (an upsert locks the row it inserts or updates); a custom bucket's row exists or the bucket does not.
   */
  async function lockBucket(tx: Transaction, orgId: string, bucket: string, at: string) {
    if (fixed.has(bucket)) {
      await lockFixedBucket(tx.db, orgId, bucket, at);
      return;
    }
    const rows = await lockCustomBucket(tx.db, orgId, bucket, at);
    if (rows.length === 0) throw await absent(tx, bucket);
  }

  /** A custom bucket this organization lacks: 403 when another organization has it (the issue's rule), else 404. */
  async function absent(db: Pick<Transaction, 'query'>, bucket: string) {
    const other = await db.query(
      sql`select 1 from attribute_buckets where name = ${bucket} and custom limit 1`,
    );
    return other.length > 0
      ? AttributeErrors.BUCKET_OF_ANOTHER_ORGANIZATION(bucket)
      : AttributeErrors.BUCKET_NOT_FOUND(bucket);
  }

  /**
   * Writes one bucket's attributes in one statement, under the bucket's lock taken by the statement
   * before (which, having waited for the lock, lets this one see what the previous holder committed).
   * `replace` also deletes the keys not sent: both parts touch disjoint keys, so one snapshot serves
   * both. Answers how many attributes the bucket holds afterwards.
   */
  async function writeBucket(
    tx: Transaction,
    orgId: string,
    bucket: string,
    mode: 'replace' | 'merge',
    keys: readonly string[],
    sealed: readonly string[],
    at: string,
  ): Promise<number> {
    const statement = mode === 'replace' ? replaceBucket : mergeBucket;
    const [row] = await statement(tx.db, orgId, bucket, keys, sealed, at);
    return row!.n;
  }

  const opened = createOpenedValues(o.openedValuesBytes);
  // The box's synchronous members, where it has them (local keys): no promise per value.
  const sealNow = secrets.sealNow?.bind(secrets);
  const openNow = secrets.openNow?.bind(secrets);

  /** A bucket's values sealed for their places; at once where the box can, each kept as opened. */
  function seal(orgId: string, bucket: string, attrs: PreparedAttribute[]): string[] | Promise<string[]> {
    const sealOne = (a: PreparedAttribute): string | Promise<string> => {
      const context = contextOf(orgId, bucket, a.key);
      const keep = (sealed: string) => {
        opened.set(context, sealed, a.json);
        return sealed;
      };
      return sealNow ? keep(sealNow(a.json, context)) : secrets.seal(a.json, context).then(keep);
    };
    const sealed = attrs.map(sealOne);
    return allNow(sealed) ?? Promise.all(sealed);
  }

  const unreadable = (cause: unknown, key: string, bucket: string) => {
    const why =
      cause instanceof SecretBoxError && cause.code === 'UNKNOWN_KEY'
        ? cause.message
        : 'altered at rest, or sealed for another place';
    return AttributeErrors.VALUE_UNREADABLE.with({ cause })(key, bucket, why);
  };

  /** A value's plaintext: kept from before, or opened (at once where the box can) and kept. */
  function plaintextOf(orgId: string, bucket: string, key: string, sealed: string): string | Promise<string> {
    const context = contextOf(orgId, bucket, key);
    const kept = opened.get(context, sealed);
    if (kept !== undefined) return kept;
    const keep = (plaintext: string) => {
      opened.set(context, sealed, plaintext);
      return plaintext;
    };
    if (!openNow)
      return secrets.open(sealed, context).then(keep, (cause: unknown) => {
        throw unreadable(cause, key, bucket);
      });
    try {
      return keep(openNow(sealed, context));
    } catch (cause) {
      throw unreadable(cause, key, bucket);
    }
  }

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
      if (w.mode === 'delete') {
        await lockBucket(tx, orgId, w.bucket, at);
        await tx.query(
          w.names === null
            ? sql`delete from attributes where org_id = ${orgId} and bucket = ${w.bucket}`
            : sql`delete from attributes where org_id = ${orgId} and bucket = ${w.bucket} and key = any(${sql.param(w.names)}::text[])`,
        );
        continue;
      }
      // Awaited one after the other: the write must start, and take its snapshot, once the lock is held.
      // (Sending both at once would save a round trip, but postgres.js does not reliably settle
      // statements pipelined inside a transaction.)
      await lockBucket(tx, orgId, w.bucket, at);
      const keys = w.attributes.map((a) => a.key);
      const n = await writeBucket(tx, orgId, w.bucket, w.mode, keys, sealed[i]!, at);
      if (n > o.maxAttributesPerBucket)
        throw AttributeErrors.BUCKET_FULL(
          `bucket ${w.bucket} would hold ${n} attributes; the limit is ${o.maxAttributesPerBucket} a bucket`,
        );
    }
  }

  // Whole-bucket writes and reads of concurrent requests share statements (batches.ts).
  const batched = createBatchedWrites({
    storage,
    fixed,
    maxAttributesPerBucket: o.maxAttributesPerBucket,
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
      const rows: AttributeRow[] =
        buckets && !names && isUuid(orgId)
          ? await reads.read(orgId.toLowerCase(), buckets)
          : await selectAttributes[buckets ? 1 : 0]![names ? 1 : 0]!.execute({ org: orgId, buckets, names });
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
        const entry: [string, unknown] = [row.key, null];
        list.push(entry);
        const plaintext = plaintextOf(orgId, row.bucket, row.key, row.value);
        if (typeof plaintext === 'string') entry[1] = JSON.parse(plaintext);
        else
          pending.push(
            plaintext.then((text) => {
              entry[1] = JSON.parse(text);
            }),
          );
      }
      if (pending.length > 0) await Promise.all(pending);
      return out;
    },

    /** Every bucket of the organization: the fixed ones, then its custom ones in name order. */
    async listBuckets(orgId: string): Promise<BucketDefinition[]> {
      const rows = await selectCustom[0]!.execute({ org: orgId, buckets: null });
      return [
        ...fixed.values(),
        ...rows
          .filter((r) => !fixed.has(r.name))
          .map((r) => customBucket(r.name, r.endUserPermissions as EndUserPermissions)),
      ];
    },

    /** Creates a custom bucket; 409 when the name is taken, 400 past the organization's allowance. */
    async createBucket(orgId: string, name: string, endUserPermissions: EndUserPermissions) {
      const problem = customNameProblem(name);
      if (problem) throw AttributeErrors.INVALID_BUCKET(`body.name: ${problem}`);
      if (fixed.has(name))
        throw AttributeErrors.BUCKET_EXISTS(`bucket ${name} is a standard bucket; it exists already`);
      return storage.transaction(async (tx) => {
        // Creations of one organization take turns, so the allowance holds under concurrency.
        await tx.query(
          sql`select pg_advisory_xact_lock(hashtextextended(${`attribute-buckets:${orgId}`}, 0))`,
        );
        const [row] = await tx.query<{ n: number }>(
          sql`select count(*)::int as n from attribute_buckets where org_id = ${orgId} and custom`,
        );
        if (row!.n >= o.maxCustomBuckets) throw AttributeErrors.TOO_MANY_BUCKETS(row!.n, o.maxCustomBuckets);
        const at = now();
        const inserted = await tx.query(sql`insert into attribute_buckets
          (org_id, name, custom, end_user_permissions, version, created_at, updated_at)
          values (${orgId}, ${name}, true, ${endUserPermissions}, 0, ${at}, ${at})
          on conflict (org_id, name) do nothing returning 1`);
        if (inserted.length === 0)
          throw AttributeErrors.BUCKET_EXISTS(`bucket ${name} exists already in this organization`);
        return customBucket(name, endUserPermissions);
      });
    },

    /** Deletes a custom bucket and its attributes, after any write in flight on it. */
    async deleteBucket(orgId: string, name: string): Promise<void> {
      await storage.transaction(async (tx) => {
        const gone = await tx.query(
          sql`delete from attribute_buckets where org_id = ${orgId} and name = ${name} and custom returning 1`,
        );
        if (gone.length === 0) throw await absent(tx, name);
        await tx.query(sql`delete from attributes where org_id = ${orgId} and bucket = ${name}`);
      });
    },
  };
}

export type AttributeStore = ReturnType<typeof createAttributeStore>;
