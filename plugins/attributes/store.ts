import { and, eq, sql } from 'drizzle-orm';
import { arrayLiteral, prepared } from '../../core/db/prepared.ts';
import type { SealedColumn } from '../../core/db/reseal.ts';
import { isUuid } from '../../core/ids.ts';

import type { Clock } from '../../core/ports/clock.ts';
import { type SecretBox, SecretBoxError } from '../../core/ports/secret-box.ts';
import type { Storage, Transaction } from '../../core/ports/storage.ts';
import { createBucketReads } from './batched-reads.ts';
import { createBatchedWrites } from './batched-writes.ts';
import {
  BUCKET_NAME_RE,
  type BucketDefinition,
  customNameProblem,
  type EndUserPermissions,
} from './buckets.ts';
import { AttributeErrors } from './errors.ts';
import type { PreparedAttribute } from './limits.ts';
import { createOpenedValues } from './opened-values.ts';
import { attributeBuckets } from './schema.ts';
import { type BucketRow, lockCustomAlone, storedBytes, writeBucketsAlone, writeRow } from './statements.ts';

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

/** The attribute values, for `secrets reseal`: each bucket row's object of name to sealed value. */
export const attributesSealed: SealedColumn = {
  name: 'attributes.value',
  table: 'attribute_buckets',
  keys: ['org_id', 'name'],
  column: 'attributes',
  map: true,
  context: (row, name) => contextOf(row.org_id!, row.name!, name!),
};

/**
 * Deletes names from a bucket (all of them when the names are null); no row: nothing to delete, or a
 * custom bucket this organization lacks.
 */
const deleteNames = prepared<{ one: number }>(
  'attributes_delete_names',
  `update attribute_buckets set version = version + 1, updated_at = $4,
     attributes = case when $3::text[] is null then '{}'::jsonb else attributes - $3::text[] end
   where org_id = $1 and name = $2 returning 1 as one`,
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

  /** Locks a custom bucket's row for the rest of the transaction; none: the bucket does not exist here. */
  async function lockCustom(tx: Transaction, orgId: string, bucket: string, at: string) {
    const rows = await lockCustomAlone(tx.db, arrayLiteral([orgId]), arrayLiteral([bucket]), at);
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
      });
    },
  };
}

export type AttributeStore = ReturnType<typeof createAttributeStore>;
