import { Elysia } from 'elysia';
import * as v from 'valibot';

import { bodyDepthOption } from '../../core/http/body-depth.ts';
import { consistentWrite } from '../../core/http/consistency.ts';
import { ErrorEnvelopeSchema, errorResponses, ok, resultOf } from '../../core/http/envelope.ts';
import { refuseArrayBody } from '../../core/http/object-body.ts';
import {
  consistencyHeaders as consistencyHeaderDocs,
  errorDoc,
  writeErrorDocs,
} from '../../core/http/openapi-docs.ts';
import { NoQuery } from '../../core/http/validation.ts';
import type { ServiceContext } from '../../core/plugin.ts';
import { BUCKET_NAME_RE, type BucketDefinition } from './buckets.ts';
import { AttributeErrors, shown } from './errors.ts';
import {
  isObject,
  MAX_BUCKETS_PER_REQUEST,
  nameProblem,
  Problems,
  prepareAttributes,
  typeOf,
  WRITE_BODY_DEPTH,
} from './limits.ts';
import { type EmptyList, namesFromQuery, refuseBody } from './query.ts';
import {
  AttributeNamesQuery,
  AttributesBody,
  AttributesResult,
  BucketedAttributesBody,
  BucketedAttributesResult,
  BucketNameParams,
  BucketNamesQuery,
  BucketSchema,
  CreateBucketBody,
  DeleteNamesQuery,
} from './schema.ts';
import type { AttributeStore, BucketContents, BucketWrite } from './store.ts';

const TAGS = ['Organization Attributes'];
const SECURITY = [{ orgId: [], apiKey: [] }];
/**
 * The answers of a write, written out for the OpenAPI document: a 204 has no body, which a response
 * schema cannot say, so write routes list their responses in `detail` instead.
 */
const writeResponses = {
  204: { description: 'No content: the write is durable and visible to every replica' },
  400: errorDoc('Bad request: the body, a query parameter or a consistency header breaks a rule'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A bucket this organization may not write, or a key of another organization'),
  404: errorDoc('No such bucket in this organization'),
  ...writeErrorDocs,
};

const toBucketJson = (b: BucketDefinition, orgId: string) => ({
  name: b.name,
  sharing_scope: b.sharingScope,
  owner_organization_id: orgId,
  end_user_permissions: b.endUserPermissions,
  organization_permissions: b.organizationAccess,
  standard: b.standard,
});

/** Attribute entries as a JSON object. `Object.fromEntries` defines own properties, so `__proto__` stays a key. */
const toObject = (entries: Array<[string, unknown]>) => Object.fromEntries(entries);
const toBucketed = (contents: BucketContents) =>
  Object.fromEntries([...contents].map(([bucket, entries]) => [bucket, toObject(entries)]));

/** Where a bucket's attributes sit in a multi-bucket body, for messages. */
const whereIn = (bucket: string) =>
  BUCKET_NAME_RE.test(bucket) ? `body.${bucket}` : `body[${shown(bucket)}]`;

/** How many attributes a bucket may hold, and how many one request may carry over all its buckets. */
export interface AttributeLimits {
  perBucket: number;
  perRequest: number;
}

export function attributeRoutes(ctx: ServiceContext, store: AttributeStore, limits: AttributeLimits) {
  const consistencyHeaders = consistencyHeaderDocs(ctx.headers);

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

  const write = (request: Request, orgId: string, writes: BucketWrite[]) =>
    consistentWrite(request, ctx.headers, () => store.write(orgId, writes));

  const attributeNames = (request: Request, empty: EmptyList) =>
    namesFromQuery(request.url, 'attributes', nameProblem, empty);

  return (
    new Elysia()
      .use(ctx.auth)
      .use(bodyDepthOption)
      // Several buckets at once.
      .put(
        '/organizations/attributes',
        async ({ org, body, request, set }) => {
          const writes = prepareMany(body, 'replace');
          if (writes.length) await write(request, org.id, writes);
          set.status = 204;
        },
        {
          apiKey: true,
          body: BucketedAttributesBody,
          bodyDepth: WRITE_BODY_DEPTH.buckets,
          parse: 'json',
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'PutOrganizationsAttributes',
            summary: 'Replace the attributes of several buckets at once',
            description:
              'Each bucket named in the body gets exactly the attributes sent for it: attributes not sent are deleted. All buckets or none: the body is checked whole, and the buckets are written in one transaction.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .patch(
        '/organizations/attributes',
        async ({ org, body, request, set }) => {
          const writes = prepareMany(body, 'merge');
          if (writes.length) await write(request, org.id, writes);
          set.status = 204;
        },
        {
          apiKey: true,
          body: BucketedAttributesBody,
          bodyDepth: WRITE_BODY_DEPTH.buckets,
          parse: 'json',
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'PatchOrganizationsAttributes',
            summary: 'Create or modify attributes in several buckets at once',
            description:
              'Attributes sent are created or overwritten; the others are left untouched. A null value stores JSON null (use DELETE to remove an attribute). All buckets or none.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .get(
        '/organizations/attributes',
        async ({ org, request }) => {
          const buckets = namesFromQuery(request.url, 'buckets', () => null, 'all');
          return ok(toBucketed(await store.read(org.id, buckets, null)));
        },
        {
          apiKey: true,
          query: BucketNamesQuery,
          response: { 200: BucketedAttributesResult, ...errorResponses },
          detail: {
            operationId: 'GetOrganizationsAttributes',
            summary: 'Read the attributes of several buckets at once',
            description:
              'Every bucket named in `buckets` (absent or empty: every bucket of the organization), read in one snapshot. Any other query parameter is a 400.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      // One bucket.
      .put(
        '/organizations/attributes/:bucket_name',
        async ({ org, params, body, request, set }) => {
          const attributes = prepareOne(body, 'replace');
          const bucket = writable(params.bucket_name);
          await write(request, org.id, [{ bucket, mode: 'replace', attributes }]);
          set.status = 204;
        },
        {
          apiKey: true,
          params: BucketNameParams,
          body: AttributesBody,
          bodyDepth: WRITE_BODY_DEPTH.oneBucket,
          parse: 'json',
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'PutOrganizationsAttributesBucketName',
            summary: "Replace a bucket's attributes",
            description:
              'The bucket gets exactly the attributes sent: existing attributes whose keys are not in the body are deleted.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .patch(
        '/organizations/attributes/:bucket_name',
        async ({ org, params, body, request, set }) => {
          const attributes = prepareOne(body, 'merge');
          const bucket = writable(params.bucket_name);
          await write(request, org.id, [{ bucket, mode: 'merge', attributes }]);
          set.status = 204;
        },
        {
          apiKey: true,
          params: BucketNameParams,
          body: AttributesBody,
          bodyDepth: WRITE_BODY_DEPTH.oneBucket,
          parse: 'json',
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'PatchOrganizationsAttributesBucketName',
            summary: 'Create or modify attributes in a bucket',
            description:
              'Attributes sent are created or overwritten; the others are left untouched. A null value stores JSON null (use DELETE to remove an attribute).',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .get(
        '/organizations/attributes/:bucket_name',
        async ({ org, params, request }) => {
          const names = attributeNames(request, 'all');
          const contents = await store.read(org.id, [params.bucket_name], names);
          return ok(toObject(contents.get(params.bucket_name)!));
        },
        {
          apiKey: true,
          params: BucketNameParams,
          query: AttributeNamesQuery,
          response: { 200: AttributesResult, ...errorResponses },
          detail: {
            operationId: 'GetOrganizationsAttributesBucketName',
            summary: "Read a bucket's attributes",
            description:
              'Every attribute of the bucket (`attributes` absent or empty), or those named in it that exist. Any other query parameter is a 400.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .delete(
        '/organizations/attributes/:bucket_name',
        async ({ org, params, request, set }) => {
          const names = attributeNames(request, 'refuse');
          await refuseBody(request);
          const bucket = writable(params.bucket_name, 'changed');
          await write(request, org.id, [{ bucket, mode: 'delete', names }]);
          set.status = 204;
        },
        {
          apiKey: true,
          params: BucketNameParams,
          query: DeleteNamesQuery,
          parse: 'none',
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'DeleteOrganizationsAttributesBucketName',
            summary: 'Delete attributes from a bucket',
            description:
              'Deletes the attributes named in `attributes`; without the parameter, every attribute of the bucket. `attributes` given empty, any other query parameter, or a request body is a 400 (and deletes nothing). Permanent.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      // The buckets themselves.
      .get(
        '/organizations/attribute-buckets',
        async ({ org }) => ok((await store.listBuckets(org.id)).map((b) => toBucketJson(b, org.id))),
        {
          apiKey: true,
          query: NoQuery,
          response: { 200: resultOf(v.array(BucketSchema)), ...errorResponses },
          detail: {
            operationId: 'GetOrganizationsAttributeBuckets',
            summary: "List the organization's attribute buckets",
            description: 'The standard buckets every organization has, then the custom buckets it created.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .post(
        '/organizations/attribute-buckets',
        async ({ org, body, request, set }) => {
          const created = await consistentWrite(request, ctx.headers, () =>
            store.createBucket(org.id, body.name, body.end_user_permissions),
          );
          set.status = 201;
          return ok(toBucketJson(created, org.id));
        },
        {
          apiKey: true,
          query: NoQuery,
          body: CreateBucketBody,
          parse: 'json',
          transform: refuseArrayBody,
          headers: consistencyHeaders,
          response: {
            201: resultOf(BucketSchema),
            ...errorResponses,
            408: ErrorEnvelopeSchema,
            409: ErrorEnvelopeSchema,
            413: ErrorEnvelopeSchema,
          },
          detail: {
            operationId: 'PostOrganizationsAttributeBuckets',
            summary: 'Create a custom attribute bucket',
            description:
              'A bucket of this organization only; its name may not be a standard bucket name. 409 when it exists.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
      .delete(
        '/organizations/attribute-buckets/:bucket_name',
        async ({ org, params, request, set }) => {
          const name = params.bucket_name;
          if (store.fixedBucket(name)) throw AttributeErrors.BUCKET_STANDARD(name);
          // A name no bucket can have (a NUL, say) is not looked up: the database would refuse it.
          if (!BUCKET_NAME_RE.test(name)) throw AttributeErrors.BUCKET_NOT_FOUND(name);
          await consistentWrite(request, ctx.headers, () => store.deleteBucket(org.id, name));
          set.status = 204;
        },
        {
          apiKey: true,
          query: NoQuery,
          params: BucketNameParams,
          headers: consistencyHeaders,
          detail: {
            responses: writeResponses,
            operationId: 'DeleteOrganizationsAttributeBucketsBucketName',
            summary: 'Delete a custom attribute bucket and its attributes',
            description: 'Standard buckets cannot be deleted (403). Permanent.',
            tags: TAGS,
            security: SECURITY,
          },
        },
      )
  );
}
