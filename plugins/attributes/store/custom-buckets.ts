import { and, eq, sql } from 'drizzle-orm';
import { arrayLiteral } from '../../../core/db/prepared.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { type BucketDefinition, customNameProblem, type EndUserPermissions } from '../buckets.ts';
import { AttributeErrors } from '../errors.ts';
import { attributeBuckets } from '../schema.ts';
import { lockCustomAlone } from './statements.ts';

const customBucket = (name: string, endUserPermissions: EndUserPermissions): BucketDefinition => ({
  name,
  sharingScope: 'organization',
  endUserPermissions,
  organizationAccess: 'read_write',
  standard: false,
});

/**
 * Custom buckets, which an organization creates and deletes: listed after the fixed ones, locked before
 * a write to them, and told apart from a custom bucket of another organization.
 */
export function createCustomBuckets(o: {
  storage: Storage;
  fixed: ReadonlyMap<string, BucketDefinition>;
  maxCustomBuckets: number;
  now: () => string;
}) {
  const { storage, fixed, now } = o;
  const p = sql.placeholder;

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

  /** Every bucket of the organization: the fixed ones, then its custom ones in name order. */
  async function listBuckets(orgId: string): Promise<BucketDefinition[]> {
    const rows = await selectCustom[0]!.execute({ org: orgId, buckets: null });
    return [
      ...fixed.values(),
      ...rows
        .filter((r) => !fixed.has(r.name))
        .map((r) => customBucket(r.name, r.endUserPermissions as EndUserPermissions)),
    ];
  }

  /** Creates a custom bucket; 409 when the name is taken, 400 past the organization's allowance. */
  async function createBucket(orgId: string, name: string, endUserPermissions: EndUserPermissions) {
    const problem = customNameProblem(name);
    if (problem) throw AttributeErrors.INVALID_BUCKET(`body.name: ${problem}`);
    if (fixed.has(name))
      throw AttributeErrors.BUCKET_EXISTS(`bucket ${name} is a standard bucket; it exists already`);
    return storage.transaction(async (tx) => {
      // Creations of one organization take turns, so the allowance holds under concurrency.
      await tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`attribute-buckets:${orgId}`}, 0))`);
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
  }

  /** Deletes a custom bucket and its attributes, after any write in flight on it. */
  async function deleteBucket(orgId: string, name: string): Promise<void> {
    await storage.transaction(async (tx) => {
      const gone = await tx.query(
        sql`delete from attribute_buckets where org_id = ${orgId} and name = ${name} and custom returning 1`,
      );
      if (gone.length === 0) throw await absent(tx, name);
    });
  }

  return { selectCustom, lockCustom, absent, listBuckets, createBucket, deleteBucket };
}
