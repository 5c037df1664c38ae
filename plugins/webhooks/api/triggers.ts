import { Elysia } from 'elysia';
import * as v from 'valibot';
import { triggerListName } from '../../../core/events/trigger-names.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { NoQuery } from '../../../core/http/validation.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { TriggerInputSchema, TriggerQuery, TriggerSchema, WebhookIdParams } from '../schema.ts';
import { checkWebhookId, type WebhookStore } from '../store/webhooks.ts';
import { apiKeySecurity, consistencyHeaders, consistent, errorDoc, TAG, writeErrorDocs } from './common.ts';
import { canonicalTrigger } from './trigger-input.ts';

/** Create (idempotent), list and delete the triggers of a webhook. */
export function triggerRoutes(ctx: ServiceContext, store: WebhookStore) {
  const names = ctx.headers;
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/organizations/webhooks/:webhook_id/triggers',
      async ({ org, params, body, request, set }) => {
        const id = checkWebhookId(params.webhook_id);
        const trigger = canonicalTrigger(body.trigger_type, body.trigger_name);
        await consistent(request, names, () => store.addTrigger(org.id, id, trigger));
        set.status = 201;
        return {};
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        params: WebhookIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        query: NoQuery,
        body: TriggerInputSchema,
        response: { 201: v.object({}), ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'PostOrganizationsWebhooksWebhookIdTriggers',
          summary: 'Add a trigger to a webhook',
          description:
            'trigger_type event with one of the accepted event names (cloud-provider events are not), or sync_hook with token_minted. Adding a trigger the webhook has already changes nothing.',
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .get(
      '/organizations/webhooks/:webhook_id/triggers',
      async ({ org, params }) => {
        const triggers = await store.listTriggers(org.id, checkWebhookId(params.webhook_id));
        return ok(
          triggers.map((t) => ({
            trigger_type: t.triggerType as 'event' | 'sync_hook',
            trigger_name: t.triggerType === 'event' ? triggerListName(t.triggerName) : t.triggerName,
          })),
        );
      },
      {
        apiKey: true,
        params: WebhookIdParams,
        query: NoQuery,
        response: { 200: resultOf(v.array(TriggerSchema)), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsWebhooksWebhookIdTriggers',
          summary: "List a webhook's triggers",
          tags: [TAG],
          security: apiKeySecurity,
        },
      },
    )
    .delete(
      '/organizations/webhooks/:webhook_id/triggers',
      async ({ org, params, query, request, set }) => {
        const id = checkWebhookId(params.webhook_id);
        const trigger = canonicalTrigger(query.trigger_type, query.trigger_name, 'query');
        await consistent(request, names, () => store.removeTrigger(org.id, id, trigger));
        set.status = 204;
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        params: WebhookIdParams,
        query: TriggerQuery,
        detail: {
          operationId: 'DeleteOrganizationsWebhooksWebhookIdTriggers',
          summary: 'Remove a trigger from a webhook',
          description:
            'Names the trigger by the query parameters trigger_type and trigger_name. Events already fanned out may still reach the webhook for a moment.',
          tags: [TAG],
          security: apiKeySecurity,
          responses: {
            204: { description: 'Removed' },
            400: errorDoc('Bad request'),
            401: errorDoc('No or bad API key'),
            403: errorDoc('An API key of another organization'),
            404: errorDoc('No such webhook or trigger'),
            ...writeErrorDocs,
          },
        },
      },
    );
}
