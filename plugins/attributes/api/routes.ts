import { Elysia } from 'elysia';

import { bodyDepthOption } from '../../../core/http/body-depth.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok } from '../../../core/http/envelope.ts';
import { consistencyHeaders as consistencyHeaderDocs } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { nameProblem, WRITE_BODY_DEPTH } from '../limits.ts';
import {
  AttributeNamesQuery,
  AttributesBody,
  AttributesResult,
  BucketedAttributesBody,
  BucketedAttributesResult,
  BucketNameParams,
  BucketNamesQuery,
  DeleteNamesQuery,
} from '../schema.ts';
import type { AttributeStore, BucketContents, BucketWrite } from '../store/attributes.ts';
import { bucketRoutes } from './bucket-routes.ts';
import { SECURITY, TAGS, writeResponses } from './openapi.ts';
import { type EmptyList, namesFromQuery, refuseBody } from './query.ts';
import { type AttributeLimits, createWriteChecks } from './write-checks.ts';

/** Attribute entries as a JSON object. `Object.fromEntries` defines own properties, so `__proto__` stays a key. */
const toObject = (entries: Array<[string, unknown]>) => Object.fromEntries(entries);
const toBucketed = (contents: BucketContents) =>
  Object.fromEntries([...contents].map(([bucket, entries]) => [bucket, toObject(entries)]));

/** An organization's attributes, one bucket or several at once; the buckets themselves are in bucket-routes.ts. */
export function attributeRoutes(ctx: ServiceContext, store: AttributeStore, limits: AttributeLimits) {
  const consistencyHeaders = consistencyHeaderDocs(ctx.headers);
  const { writable, prepareOne, prepareMany } = createWriteChecks(store, limits);

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
      .use(bucketRoutes(ctx, store))
  );
}
