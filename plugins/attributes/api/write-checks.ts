import { BUCKET_NAME_RE } from '../buckets.ts';
import { AttributeErrors, shown } from '../errors.ts';
import { isObject, MAX_BUCKETS_PER_REQUEST, Problems, prepareAttributes, typeOf } from '../limits.ts';
import type { AttributeStore, BucketWrite } from '../store/attributes.ts';

/** Where a bucket's attributes sit in a multi-bucket body, for messages. */
const whereIn = (bucket: string) =>
  BUCKET_NAME_RE.test(bucket) ? `body.${bucket}` : `body[${shown(bucket)}]`;

/** How many attributes a bucket may hold, and how many one request may carry over all its buckets. */
export interface AttributeLimits {
  perBucket: number;
  perRequest: number;
}

/**
 * A write request's checks, made before anything is written: the bucket may be written by this
 * organization's API key, and the body keeps every limit (a 400 lists what is wrong).
 */
export function createWriteChecks(store: Pick<AttributeStore, 'fixedBucket'>, limits: AttributeLimits) {
  /** The bucket's name if this organization's API key may write it: 404 a name that cannot exist, 403 read-only. */
  function writable(name: string, what = 'written'): string {
    const fixed = store.fixedBucket(name);
    if (!fixed && !BUCKET_NAME_RE.test(name)) throw AttributeErrors.BUCKET_NOT_FOUND(name);
    if (fixed?.organizationAccess === 'read_only') throw AttributeErrors.BUCKET_READ_ONLY(name, what);
    return name;
  }

  /** One bucket's body checked against every limit; a 400 lists what is wrong. */
  function prepareOne(body: unknown, mode: 'replace' | 'merge') {
    const problems = new Problems();
    const attributes = prepareAttributes(body, 'body', problems);
    problems.throwIfAny();
    countCheck(attributes.length, mode);
    return attributes;
  }

  function countCheck(n: number, mode: 'replace' | 'merge', where = 'the request') {
    if (n > limits.perRequest)
      throw AttributeErrors.INVALID_ATTRIBUTES(
        `${where} carries ${n} attributes; the limit is ${limits.perRequest} a request`,
      );
    if (mode === 'replace' && n > limits.perBucket)
      throw AttributeErrors.BUCKET_FULL(
        `${where} puts ${n} attributes in one bucket; the limit is ${limits.perBucket} a bucket`,
      );
  }

  /** A multi-bucket body checked whole before anything is written: every bucket, every attribute. */
  function prepareMany(body: unknown, mode: 'replace' | 'merge'): BucketWrite[] {
    if (!isObject(body))
      throw AttributeErrors.INVALID_ATTRIBUTES(
        `body must be a JSON object of buckets, each an object of attributes (got ${typeOf(body)})`,
      );
    const buckets = Object.keys(body);
    if (buckets.length > MAX_BUCKETS_PER_REQUEST)
      throw AttributeErrors.INVALID_ATTRIBUTES(
        `body names ${buckets.length} buckets; the limit is ${MAX_BUCKETS_PER_REQUEST} a request`,
      );
    const problems = new Problems();
    const writes = buckets.map((bucket) => ({
      bucket,
      mode,
      attributes: prepareAttributes(body[bucket], whereIn(bucket), problems),
    }));
    problems.throwIfAny();
    countCheck(
      writes.reduce((n, w) => n + w.attributes.length, 0),
      'merge',
    );
    for (const w of writes) countCheck(w.attributes.length, mode, whereIn(w.bucket));
    // Every bucket is checked before any is written: unknown names first, then read-only ones.
    for (const w of writes)
      if (!store.fixedBucket(w.bucket) && !BUCKET_NAME_RE.test(w.bucket))
        throw AttributeErrors.BUCKET_NOT_FOUND(w.bucket);
    for (const w of writes) writable(w.bucket);
    return writes;
  }

  return { writable, prepareOne, prepareMany };
}
