import { bigint, boolean, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { passThrough } from '../../core/http/openapi-docs.ts';
import { exactObject } from '../../core/http/validation.ts';
import { uuidString } from '../../core/ids.ts';
import { END_USER_PERMISSIONS } from './buckets.ts';
import { MAX_NAME_BYTES, MAX_VALUE_BYTES } from './limits.ts';

/**
 * One row per bucket an organization has written to (standard buckets) or created (custom ones), with
 * the bucket's attributes: a JSON object of name to value, each value its JSON text sealed by the
 * SecretBox and bound to organization, bucket and name. A write of a bucket is one row written, so
 * writes to one bucket follow one another on the row's lock, and a PUT replaces the whole set;
 * `version` counts the writes.
 */
export const attributeBuckets = pgTable(
  'attribute_buckets',
  {
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    custom: boolean('custom').notNull(),
    /** Custom buckets only: what end users may do. */
    endUserPermissions: text('end_user_permissions'),
    version: bigint('version', { mode: 'number' }).notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    /** Name to sealed value. */
    attributes: jsonb('attributes').$type<Record<string, string>>().notNull().default({}),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.name] })],
);

// Attribute bodies are documented with `passThrough` (validation hands the value through untouched):
// valibot's `record` and `looseObject` drop the keys `__proto__`, `constructor` and `prototype` (a guard
// against prototype pollution), and Elysia replaces the body with the validated output; attribute names
// are data, so the routes check the raw body themselves (limits.ts) and never copy it into a plain object.

const attributesDescription = `Attributes as key-value pairs. A key is 1 to ${MAX_NAME_BYTES} bytes of UTF-8; a value is any JSON value of at most ${MAX_VALUE_BYTES} bytes (64 KiB) serialized.`;

export const AttributesDoc = v.pipe(
  v.record(v.string(), v.unknown()),
  v.description(attributesDescription),
  v.metadata({ examples: [{ plan: 'enterprise', seats: 25, tags: ['eu', 'beta'] }] }),
);

export const BucketedAttributesDoc = v.pipe(
  v.record(v.string(), AttributesDoc),
  v.description('Attributes by bucket: bucket names are the top-level keys, their attributes the values.'),
);

export const AttributesBody = passThrough(AttributesDoc);
export const BucketedAttributesBody = passThrough(BucketedAttributesDoc);
export const AttributesResult = passThrough(v.object({ result: AttributesDoc }));
export const BucketedAttributesResult = passThrough(v.object({ result: BucketedAttributesDoc }));

export const BucketNameParams = v.object({
  // A segment that does not percent-decode is refused before this, for every route (core/http/path-params.ts).
  bucket_name: v.pipe(
    v.string(),
    v.description('The name of an attribute bucket, such as end_user_read_write.'),
  ),
});

/**
 * The names' query parameters, for the OpenAPI document. Elysia splits `a,b` into an array and refuses
 * the parameter repeated with commas; the routes read the raw query themselves (query.ts), so these
 * hand the query through untouched.
 */
const nameList = (description: string) =>
  v.optional(v.pipe(v.union([v.string(), v.array(v.string())]), v.description(description)));

const COMMA = 'A comma inside a name is sent as %2C. Any other query parameter is a 400.';

export const AttributeNamesQuery = passThrough(
  v.object({
    attributes: nameList(
      `A comma-separated list of attribute names; absent or empty means every attribute. ${COMMA}`,
    ),
  }),
);

export const DeleteNamesQuery = passThrough(
  v.object({
    attributes: nameList(
      `A comma-separated list of attribute names to delete; absent (with no body) means every attribute, and given empty it is a 400. ${COMMA}`,
    ),
  }),
);

export const BucketNamesQuery = passThrough(
  v.object({
    buckets: nameList(`A comma-separated list of bucket names; absent or empty means every bucket. ${COMMA}`),
  }),
);

export const BucketSchema = v.object({
  name: v.string(),
  sharing_scope: v.picklist(['organization', 'person_pool']),
  owner_organization_id: uuidString(),
  end_user_permissions: v.picklist(END_USER_PERMISSIONS),
  organization_permissions: v.pipe(
    v.picklist(['read_write', 'read_only']),
    v.description("What the organization's API key may do: read_only buckets are written by the deployment."),
  ),
  standard: v.pipe(
    v.boolean(),
    v.description('Standard buckets exist for every organization; the others were created by this one.'),
  ),
});

export const CreateBucketBody = exactObject(
  {
    name: v.pipe(
      v.string(),
      v.description(
        '1 to 64 characters of a-z, 0-9, _ and -; not a standard name, not starting with person_pool-.',
      ),
    ),
    end_user_permissions: v.optional(v.picklist(END_USER_PERMISSIONS), 'no_access'),
    sharing_scope: v.optional(
      v.pipe(
        v.literal('organization'),
        v.description('Person pools are not supported yet: organization only.'),
      ),
      'organization',
    ),
  },
  'member',
);
