import { prepared } from '../../../core/db/prepared.ts';
import { type PreparedAttribute, utf8Bytes } from '../limits.ts';

// Bucket rows: the statements that lock, write and read them, for batches and for requests written
// alone, and the document a write sends them.

/** A bucket's row as reads give it: its attributes as the JSON text of name to sealed value. */
export interface BucketRow {
  bucket: string;
  attributes: string;
}

/** A bucket merged into, and what it holds afterwards: attributes, and bytes as stored (its JSON text). */
export interface Written {
  o: string;
  b: string;
  n: number;
  bytes: number;
}

// A write is one row a bucket: the bucket's attributes, name to sealed value, sent as one JSON document
// of (organization, bucket, attributes) for every bucket of the batch, so that one statement serves
// every request of the batch and its text never changes.

const PAIRS = (o: string, b: string) => `unnest(${o}::uuid[], ${b}::text[]) as r(o, b)`;

/**
 * How long a batch waits for a row lock held elsewhere: past it the batch fails, and its requests are
 * written one by one, each waiting only for its own locks (see `run` in batched-writes.ts). Set by the
 * statements themselves, before their first row (a filter of a volatile function runs for every row,
 * ahead of its insert or update), so it costs no statement of its own.
 */
const LOCK_TIMEOUT_MS = 50;
const SET_LOCK_TIMEOUT = `set_config('lock_timeout', '${LOCK_TIMEOUT_MS}ms', true) is not null`;
const NO_LOCK_TIMEOUT = 'true';

/** Locks custom buckets' rows, in the order given; a row missing is a bucket this organization lacks. */
const lockCustom = (timeout: string) =>
  `update attribute_buckets set version = version + 1, updated_at = $3
   where ctid = any(array(select (select ctid from attribute_buckets
     where org_id = r.o and name = r.b and custom offset 0) from ${PAIRS('$1', '$2')} where ${timeout}))
   returning 1 as one`;
export const lockCustomBuckets = prepared<{ one: number }>(
  'attributes_lock_custom_many',
  lockCustom(SET_LOCK_TIMEOUT),
);
export const lockCustomAlone = prepared<{ one: number }>(
  'attributes_lock_custom_one',
  lockCustom(NO_LOCK_TIMEOUT),
);

/**
 * Writes buckets: each row made on a standard bucket's first write, or updated (a custom bucket's row
 * exists, locked by the statement before). `replace` sets the attributes sent (their count and size
 * are checked before), `merge` adds them to the bucket's and answers what each bucket then holds. Rows
 * are written in the order sent, so two batches lock them in one order.
 */
const writeStatement = (mode: 'replace' | 'merge', timeout: string) =>
  `insert into attribute_buckets as t (org_id, name, custom, version, created_at, updated_at, attributes)
   select o, b, false, 1, $2, $2, a from jsonb_to_recordset($1::jsonb) as s(o uuid, b text, a jsonb)
   where ${timeout}
   on conflict (org_id, name) do update set
     attributes = ${mode === 'replace' ? 'excluded.attributes' : 't.attributes || excluded.attributes'},
     version = t.version + 1, updated_at = excluded.updated_at
   ${
     mode === 'merge'
       ? `returning t.org_id::text as o, t.name as b,
            (select count(*) from jsonb_object_keys(t.attributes))::int as n,
            octet_length(t.attributes::text)::int as bytes`
       : ''
   }`;
export const writeBuckets = {
  replace: prepared<Written>('attributes_replace_many', writeStatement('replace', SET_LOCK_TIMEOUT)),
  merge: prepared<Written>('attributes_merge_many', writeStatement('merge', SET_LOCK_TIMEOUT)),
};
/** The same for one request written alone: it waits for its locks. */
export const writeBucketsAlone = {
  replace: prepared<Written>('attributes_replace_alone', writeStatement('replace', NO_LOCK_TIMEOUT)),
  merge: prepared<Written>('attributes_merge_alone', writeStatement('merge', NO_LOCK_TIMEOUT)),
};

/** The rows of the given (organization, bucket) pairs, in one statement: one snapshot. */
export const selectBuckets = prepared<BucketRow & { org_id: string }>(
  // Unnamed, so planned for its values (see core/db/prepared.ts); its arrays go as text, one round trip.
  // A lateral subquery per pair, fenced with OFFSET 0 so the planner cannot fold it into a join: that
  // keeps it an index lookup (PGlite never analyses a table, and on a join its default estimates choose
  // a hash join over a scan of the whole table).
  null,
  `select a.org_id::text as org_id, a.name as bucket, a.attributes::text as attributes
   from ${PAIRS('$1', '$2')}, lateral (select org_id, name, attributes from attribute_buckets
     where org_id = r.o and name = r.b offset 0) a`,
);

/**
 * Deletes names from a bucket (all of them when the names are null); no row: nothing to delete, or a
 * custom bucket this organization lacks.
 */
export const deleteNames = prepared<{ one: number }>(
  'attributes_delete_names',
  `update attribute_buckets set version = version + 1, updated_at = $4,
     attributes = case when $3::text[] is null then '{}'::jsonb else attributes - $3::text[] end
   where org_id = $1 and name = $2 returning 1 as one`,
);

/**
 * The size of a bucket's attributes as stored: the length in bytes of their JSON text as Postgres
 * writes it (`{"name": "sealed", ...}`), which `octet_length(attributes::text)` measures.
 */
export function storedBytes(attrs: readonly PreparedAttribute[], sealed: readonly string[]): number {
  let bytes = 2;
  for (const [j, a] of attrs.entries())
    bytes += (j > 0 ? 2 : 0) + utf8Bytes(JSON.stringify(a.key)) + 2 + sealed[j]!.length + 2;
  return bytes;
}

/** A bucket's part of a write document: its attributes as name to sealed value. */
export function writeRow(
  orgId: string,
  bucket: string,
  attrs: readonly PreparedAttribute[],
  sealed: readonly string[],
) {
  // Object.fromEntries defines own properties: a name such as `__proto__` is a name like any other.
  const a: Record<string, string> = Object.fromEntries(attrs.map((attr, j) => [attr.key, sealed[j]!]));
  return { o: orgId, b: bucket, a };
}

/** A key for an (organization, bucket) pair. */
export const pairKey = (orgId: string, bucket: string) => `${orgId} ${bucket}`;
