import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { ServiceError } from '../../../core/errors.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { NoQuery } from '../../../core/http/validation.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { WebhookErrors } from '../errors.ts';
import { WebhookCreateSchema, WebhookIdParams, WebhookPatchSchema, WebhookSchema } from '../schema.ts';
import {
  type CustomHeaders,
  type createHeaderOpener,
  customHeaderProblems,
} from '../store/custom-headers.ts';
import { checkWebhookId, type WebhookInput, type WebhookRow, type WebhookStore } from '../store/webhooks.ts';
import { apiKeySecurity, consistencyHeaders, consistent, errorDoc, TAG, writeErrorDocs } from './common.ts';
import { parseTimeout } from './duration.ts';
import { webhookJson } from './json.ts';
import { checkTargetUrl } from './target-url.ts';

type Patch = v.InferOutput<typeof WebhookPatchSchema>;

/** Applies the rules the schema cannot say; every problem is named with its field. */
function toInput(body: Patch): WebhookInput {
  const problems: string[] = [];
  const input: WebhookInput = {};
  if (body.name !== undefined) input.name = body.name;
  if (body.description !== undefined) input.description = body.description;
  let raise: (message: string) => ServiceError = WebhookErrors.INVALID_TARGET_URL;
  if (body.target_url !== undefined) {
    const check = checkTargetUrl(body.target_url);
    if (check.ok) input.targetUrl = check.url;
    else problems.push(`body.target_url: ${check.problem}`);
  }
  if (body.timeout !== undefined) {
    if (body.timeout === null) input.timeoutNs = null;
    else {
      const t = parseTimeout(body.timeout);
      if ('ns' in t) input.timeoutNs = t.ns;
      else {
        if (!problems.length) raise = WebhookErrors.INVALID_TIMEOUT;
        problems.push(`body.timeout: ${t.problem}`);
      }
    }
  }
  if (body.custom_headers !== undefined) {
    if (body.custom_headers === null) input.customHeaders = null;
    else {
      const found = customHeaderProblems(body.custom_headers);
      if (found.length === 0) input.customHeaders = body.custom_headers as CustomHeaders;
      else {
        if (!problems.length) raise = WebhookErrors.INVALID_CUSTOM_HEADERS;
        problems.push(...found.map((p) => `body.custom_headers: ${p}`));
      }
    }
  }
  if (problems.length) throw raise(problems.join('; '));
  return input;
}

/** Create, list, get, update and delete webhooks (docs/api-contract.md; docs/spec/reference/organization-webhooks.openapi.yml). */
export function webhookRoutes(
  ctx: ServiceContext,
  store: WebhookStore,
  openHeaders: ReturnType<typeof createHeaderOpener>,
) {
  const present = async (row: WebhookRow) => webhookJson(row, await openHeaders(row.id, row.customHeaders));
  const names = ctx.headers;
  const write = {
    200: resultOf(WebhookSchema),
    409: errorResponses[400],
    ...errorResponses,
    ...writeErrorResponses,
  };

  return new Elysia()
    .use(ctx.auth)
    .post(
      '/organizations/webhooks',
      async ({ org, body, request, set }) => {
        const input = toInput(body);
        const row = await consistent(request, names, () =>
          store.create(org.id, { ...input, name: body.name, targetUrl: input.targetUrl! }),
        );
        set.status = 201;
        return ok(await present(row));
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(names),
        parse: 'json',
        transform: refuseArrayBody,
        body: WebhookCreateSchema,
        response: {
          201: resultOf(WebhookSchema),
          409: errorResponses[400],
          ...errorResponses,
          ...writeErrorResponses,
        },
        detail: {
          operationId: 'PostOrganizationsWebhooks',
          summary: 'Create a webhook',
          description:
            'target_url: https, a host that is neither localhost nor an IP address, no query or fragment, unique in the organization (409 otherwise). timeout: a duration above 0 and at most 20s. custom_headers are sealed at rest. 400 once the organization has as many webhooks as it may (1000 by default).',
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .get(
      '/organizations/webhooks',
      async ({ org }) => ok(await Promise.all((await store.list(org.id)).map(present))),
      {
        apiKey: true,
        query: NoQuery,
        response: { 200: resultOf(v.array(WebhookSchema)), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsWebhooks',
          summary: 'List webhooks',
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .get(
      '/organizations/webhooks/:webhook_id',
      async ({ org, params }) =>
        ok(await present(await store.get(org.id, checkWebhookId(params.webhook_id)))),
      {
        apiKey: true,
        query: NoQuery,
        params: WebhookIdParams,
        response: { 200: resultOf(WebhookSchema), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsWebhooksWebhookId',
          summary: 'Get a webhook',
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .patch(
      '/organizations/webhooks/:webhook_id',
      async ({ org, params, body, request }) => {
        const id = checkWebhookId(params.webhook_id);
        const input = toInput(body);
        return ok(await present(await consistent(request, names, () => store.update(org.id, id, input))));
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(names),
        params: WebhookIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: WebhookPatchSchema,
        response: write,
        detail: {
          operationId: 'PatchOrganizationsWebhooksWebhookId',
          summary: 'Update a webhook',
          description:
            'Same rules as create. custom_headers replaces the stored headers (null or {} removes them); timeout null returns to the defaults.',
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .delete(
      '/organizations/webhooks/:webhook_id',
      async ({ org, params, request, set }) => {
        const id = checkWebhookId(params.webhook_id);
        await consistent(request, names, () => store.remove(org.id, id));
        set.status = 204;
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(names),
        params: WebhookIdParams,
        detail: {
          operationId: 'DeleteOrganizationsWebhooksWebhookId',
          summary: 'Delete a webhook and its triggers',
          description:
            'Cannot be undone. Deliveries still pending are dropped (and recorded) when they come up: the webhook is called no more.',
          tags: [TAG],
          security: apiKeySecurity,
          responses: {
            204: { description: 'Deleted' },
            400: errorDoc('Bad request'),
            401: errorDoc('No or bad API key'),
            403: errorDoc('An API key of another organization'),
            404: errorDoc('No such webhook'),
            ...writeErrorDocs,
          },
        },
      },
    );
}
