import { type AttributeStoreApi, attributeStore } from '../../core/capabilities/attribute-store.ts';
import { definePlugin } from '../../core/plugin.ts';
import { attributeRoutes } from './api/routes.ts';
import { BUCKET_NAME_RE, type DeclaredBucket, fixedBuckets } from './buckets.ts';
import { AttributeErrors } from './errors.ts';
import { MAX_ATTRIBUTES_PER_REQUEST, Problems, prepareAttributes } from './limits.ts';
import { migrations } from './migrations/index.ts';
import { createAttributeStore } from './store/attributes.ts';
import { DEFAULT_OPENED_VALUES_BYTES } from './store/opened-values.ts';
import { attributesSealed } from './store/sealing.ts';

export type { DeclaredBucket, EndUserPermissions, OrganizationAccess } from './buckets.ts';

export interface AttributesOptions {
  /**
   * Buckets every organization has besides the six standard ones. A `read_only` bucket is read by the
   * organization's API key (403 on writes) and written by the deployment through `attributeStore`.
   * @default []
   */
  buckets?: DeclaredBucket[];
  /** Attributes one bucket may hold, 1 to 10,000; a request carries at most 1,000 or this many. @default 1000 */
  maxAttributesPerBucket?: number;
  /**
   * Bytes one bucket's attributes may take as stored: their names and sealed values as JSON text (a
   * sealed value is about 4/3 of its JSON, plus 40 bytes). A bucket is one row, and Postgres holds at
   * most 255 MiB in one JSON value: 1,024 to 240 MiB. @default 128 MiB (1,000 values of 64 KiB fit)
   */
  maxBucketBytes?: number;
  /** Custom buckets one organization may create. @default 100 */
  maxCustomBuckets?: number;
  /**
   * Bytes of opened values each process keeps, so that a value read again is not decrypted again
   * (least recently used first out; values stay sealed at rest). 0 keeps none. @default 8 MiB
   */
  openedValuesBytes?: number;
}

export { type AttributeStoreApi, attributeStore };

/** A bucket's attributes as stored, by default: 1,000 values of 64 KiB, sealed, fit. */
const DEFAULT_MAX_BUCKET_BYTES = 128 * 1024 * 1024;
/** Below the 255 MiB that Postgres holds in one JSON value, with room for its own framing. */
const MAX_BUCKET_BYTES = 240 * 1024 * 1024;

const positive = (name: string, n: number, max: number) => {
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new Error(`attributes: ${name} must be an integer from 1 to ${max} (got ${n})`);
  return n;
};

/**
 * Organization attributes in named buckets: replace, merge, read and delete, one bucket or several at
 * once (atomically), values sealed at rest, every write behind the consistency headers.
 *
 * @example
 * defineService({ plugins: [attributes({ buckets: [{ name: 'plan', organizationAccess: 'read_only' }] })] })
 */
export const attributes = (options: AttributesOptions = {}) => {
  // Options are checked when the deployment is defined, not on the first request.
  const fixed = fixedBuckets(options.buckets ?? []);
  const maxAttributesPerBucket = positive(
    'maxAttributesPerBucket',
    options.maxAttributesPerBucket ?? 1000,
    10_000,
  );
  // A bucket that may hold more than a request may carry could never be replaced whole.
  const limits = {
    perBucket: maxAttributesPerBucket,
    perRequest: Math.max(MAX_ATTRIBUTES_PER_REQUEST, maxAttributesPerBucket),
  };
  const maxCustomBuckets = positive('maxCustomBuckets', options.maxCustomBuckets ?? 100, 10_000);
  const maxBucketBytes = options.maxBucketBytes ?? DEFAULT_MAX_BUCKET_BYTES;
  if (!Number.isInteger(maxBucketBytes) || maxBucketBytes < 1024 || maxBucketBytes > MAX_BUCKET_BYTES)
    throw new Error(
      `attributes: maxBucketBytes must be an integer from 1024 to ${MAX_BUCKET_BYTES} (got ${maxBucketBytes})`,
    );
  const openedValuesBytes = options.openedValuesBytes ?? DEFAULT_OPENED_VALUES_BYTES;
  if (!Number.isInteger(openedValuesBytes) || openedValuesBytes < 0 || openedValuesBytes > 2 ** 32)
    throw new Error(
      `attributes: openedValuesBytes must be an integer from 0 to ${2 ** 32} (got ${openedValuesBytes})`,
    );
  return definePlugin({
    id: 'attributes',
    migrations,
    provides: { attributeStore },
    setup(ctx) {
      const store = createAttributeStore({
        storage: ctx.storage,
        secrets: ctx.secrets,
        clock: ctx.clock,
        fixed,
        maxAttributesPerBucket,
        maxBucketBytes,
        maxCustomBuckets,
        openedValuesBytes,
      });
      const api: AttributeStoreApi = {
        async read(orgId, bucket, names) {
          const contents = await store.read(orgId, [bucket], names ?? null);
          return Object.fromEntries(contents.get(bucket)!);
        },
        async write(orgId, bucket, attrs, mode = 'replace') {
          if (!fixed.has(bucket) && !BUCKET_NAME_RE.test(bucket))
            throw AttributeErrors.BUCKET_NOT_FOUND(bucket);
          const problems = new Problems();
          const prepared = prepareAttributes(attrs, 'attributes', problems);
          problems.throwIfAny();
          if (prepared.length > maxAttributesPerBucket)
            throw AttributeErrors.BUCKET_FULL(`at most ${maxAttributesPerBucket} attributes a bucket`);
          await store.write(orgId, [{ bucket, mode, attributes: prepared }]);
        },
      };
      return {
        routes: attributeRoutes(ctx, store, limits),
        provide: { attributeStore: api },
        sealed: [attributesSealed],
      };
    },
  });
};
