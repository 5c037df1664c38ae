import { Elysia } from 'elysia';
import * as v from 'valibot';

import { consistentWrite } from '../../../core/http/consistency.ts';
import { ErrorEnvelopeSchema, errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders as consistencyHeaderDocs } from '../../../core/http/openapi-docs.ts';
import { NoQuery } from '../../../core/http/validation.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { BUCKET_NAME_RE, type BucketDefinition } from '../buckets.ts';
import { AttributeErrors } from '../errors.ts';
import { BucketNameParams, BucketSchema, CreateBucketBody } from '../schema.ts';
import type { AttributeStore } from '../store/attributes.ts';
import { SECURITY, TAGS, writeResponses } from './openapi.ts';

const toBucketJson = (b: BucketDefinition, orgId: string) => ({
  name: b.name,
  sharing_scope: b.sharingScope,
  owner_organization_id: orgId,
  end_user_permissions: b.endUserPermissions,
  organization_permissions: b.organizationAccess,
  standard: b.standard,
});

/** The buckets themselves: list an organization's, create a custom one, delete a custom one. */
export function bucketRoutes(ctx: ServiceContext, store: AttributeStore) {
  const consistencyHeaders = consistencyHeaderDocs(ctx.headers);
  return new Elysia()
    .use(ctx.auth)
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
    );
}
