import { Elysia } from 'elysia';
import * as v from 'valibot';
import { CoreErrors } from '../../../core/errors.ts';
import { isRfc3339 } from '../../../core/events/formats.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { NoQuery } from '../../../core/http/validation.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import {
  DeliveriesQuery,
  DeliveryIdParams,
  DeliverySchema,
  RecoverSchema,
  ResendBody,
  WebhookIdParams,
} from '../schema.ts';
import { OPERATOR_LIMITS, type OperatorStore } from '../store/deliveries.ts';
import { checkWebhookId, type WebhookStore } from '../store/webhooks.ts';
import { apiKeySecurity, consistencyHeaders, consistent, OPERATOR_TAG } from './common.ts';

const PageMeta = v.object({
  cursor_pagination: v.object({ limit: v.number(), cursor: v.string(), total_count: v.number() }),
});

function checkDeliveryId(id: string): string {
  if (!isUuid(id))
    throw CoreErrors.VALIDATION(`path parameter delivery_id must be a UUID (got ${JSON.stringify(id)})`);
  return id.toLowerCase();
}

/**
 * Clock milliseconds of an RFC 3339 time, or a 400 naming `since`. Date.parse alone takes February 30th
 * and times without an offset (read as local time); it does not take a leap second, which RFC 3339
 * allows and which is read here as the second before it.
 */
function parseSince(text: string): number {
  const ms = isRfc3339(text)
    ? Date.parse(text.toUpperCase().replace(/(T\d\d:\d\d:)60/, (_, hm: string) => `${hm}59`))
    : Number.NaN;
  if (Number.isNaN(ms))
    throw CoreErrors.VALIDATION(
      `body.since: must be an RFC 3339 time such as 2026-01-02T03:04:05Z, with an offset (got ${JSON.stringify(text)})`,
    );
  return ms;
}

/** The resend rate limit: token buckets by organization, and the figures its message names. */
export interface ResendLimit {
  buckets: TokenBuckets;
  perMinute: number;
  burst: number;
}

/**
 * Operator endpoints (docs/api-contract.md, "Beyond the spec"): see, resend and recover a webhook's deliveries. Each
 * resend or recover call takes one token of the organization's resend limit, or answers 429.
 */
export function operatorRoutes(
  ctx: ServiceContext,
  webhooks: WebhookStore,
  deliveries: OperatorStore,
  limit: ResendLimit,
) {
  const names = ctx.headers;
  const takeResend = async (orgId: string) => {
    const take = await limit.buckets.take(orgId);
    if (!take.ok)
      throw CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': String(take.retryAfterSeconds) } })(
        `resends of organization ${orgId} are limited to ${limit.perMinute} a minute (bursts of ${limit.burst}), counting each resend and recover call: retry after ${take.retryAfterSeconds} s`,
      );
  };
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/organizations/webhooks/:webhook_id/deliveries',
      async ({ org, params, query }) => {
        const id = checkWebhookId(params.webhook_id);
        await webhooks.get(org.id, id);
        const limit = query.limit === undefined ? OPERATOR_LIMITS.defaultPage : Number(query.limit);
        if (limit < 1 || limit > OPERATOR_LIMITS.page)
          throw CoreErrors.VALIDATION(`query.limit: must be an integer from 1 to ${OPERATOR_LIMITS.page}`);
        const page = await deliveries.list(org.id, id, { limit, status: query.status, cursor: query.cursor });
        return {
          meta: { cursor_pagination: { limit, cursor: page.cursor, total_count: page.total } },
          result: page.deliveries,
        };
      },
      {
        apiKey: true,
        params: WebhookIdParams,
        query: DeliveriesQuery,
        response: { 200: v.object({ meta: PageMeta, result: v.array(DeliverySchema) }), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsWebhooksWebhookIdDeliveries',
          summary: "A webhook's deliveries and their attempts",
          description: `Newest first, each with every attempt (status code, latency, error kind, first bytes of the response). status filters (pending, retrying, succeeded, dropped); limit 1 to ${OPERATOR_LIMITS.page} (default ${OPERATOR_LIMITS.defaultPage}); pass meta.cursor_pagination.cursor back as cursor for the next page (empty when there is none).`,
          tags: [OPERATOR_TAG],
          security: apiKeySecurity,
        },
      },
    )
    .post(
      '/organizations/webhooks/:webhook_id/deliveries/:delivery_id/resend',
      async ({ org, params, request, set }) => {
        const id = checkWebhookId(params.webhook_id);
        const deliveryId = checkDeliveryId(params.delivery_id);
        await webhooks.get(org.id, id);
        await takeResend(org.id);
        const made = await consistent(request, names, () => deliveries.resend(org.id, id, deliveryId));
        set.status = 202;
        return ok(made);
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        params: DeliveryIdParams,
        query: NoQuery,
        // Parsed by its content type, not as JSON always: a resend is usually sent with no body at all.
        transform: refuseArrayBody,
        body: ResendBody,
        response: {
          202: resultOf(DeliverySchema),
          409: errorResponses[400],
          429: ErrorEnvelopeSchema,
          ...errorResponses,
          ...writeErrorResponses,
        },
        detail: {
          operationId: 'PostOrganizationsWebhooksWebhookIdDeliveriesDeliveryIdResend',
          summary: 'Resend one delivery',
          description:
            'Makes a new delivery of the same event (same sub, fresh jti, a new retry window) and answers it; the original records it as resent_as. 409 while the original is still pending or retrying; 429 with Retry-After past the resend rate limit of the organization.',
          tags: [OPERATOR_TAG],
          security: apiKeySecurity,
        },
      },
    )
    .post(
      '/organizations/webhooks/:webhook_id/recover',
      async ({ org, params, body, request, set }) => {
        const id = checkWebhookId(params.webhook_id);
        const since = parseSince(body.since);
        await webhooks.get(org.id, id);
        await takeResend(org.id);
        const ids = await consistent(request, names, () => deliveries.recover(org.id, id, since));
        set.status = 202;
        return ok({ recovered: ids.length, delivery_ids: ids });
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        params: WebhookIdParams,
        query: NoQuery,
        parse: 'json',
        transform: refuseArrayBody,
        body: RecoverSchema,
        response: {
          202: resultOf(v.object({ recovered: v.number(), delivery_ids: v.array(v.string()) })),
          429: ErrorEnvelopeSchema,
          ...errorResponses,
          ...writeErrorResponses,
        },
        detail: {
          operationId: 'PostOrganizationsWebhooksWebhookIdRecover',
          summary: 'Recover failed deliveries since a time',
          description: `Resends every dropped delivery (failed for good) made at or after since that has not been resent yet, at most ${OPERATOR_LIMITS.recover} a call (call again for more). Answers the new deliveries' ids. Takes one token of the resend rate limit (429 with Retry-After past it).`,
          tags: [OPERATOR_TAG],
          security: apiKeySecurity,
        },
      },
    );
}
