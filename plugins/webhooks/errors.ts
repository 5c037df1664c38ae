import { defineErrors, detail, type ErrorCodeOf } from '../../core/errors.ts';

/** The error codes of the webhooks plugin: stable, machine-readable, each with one HTTP status. */
export const WebhookErrors = defineErrors({
  WEBHOOK_NOT_FOUND: { status: 404, message: (id: string) => `no webhook ${id} in this organization` },
  INVALID_WEBHOOK_ID: {
    status: 400,
    message: (id: string) => `path parameter webhook_id must be a UUID (got ${JSON.stringify(id)})`,
  },
  /** target_url breaks a rule; the message lists every problem of the body. */
  INVALID_TARGET_URL: { status: 400, message: detail },
  TARGET_URL_TAKEN: {
    status: 409,
    message: (url: string) =>
      `body.target_url: another webhook of this organization already has the target_url ${url}; target URLs are unique per organization`,
  },
  INVALID_TIMEOUT: { status: 400, message: detail },
  INVALID_CUSTOM_HEADERS: { status: 400, message: detail },
  TOO_MANY_WEBHOOKS: {
    status: 400,
    message: (count: number, max: number) =>
      `this organization has ${count} webhooks; the limit is ${max} webhooks per organization (maxWebhooks): delete one first`,
  },
  INVALID_TRIGGER: { status: 400, message: detail },
  TRIGGER_NOT_FOUND: { status: 404, message: detail },
  UNKNOWN_EVENT: { status: 400, message: detail },
  TOO_MANY_TEST_EVENTS: { status: 400, message: detail },
  DELIVERY_NOT_FOUND: {
    status: 404,
    message: (webhookId: string, deliveryId: string) => `webhook ${webhookId} has no delivery ${deliveryId}`,
  },
  DELIVERY_IN_PROGRESS: {
    status: 409,
    message: (deliveryId: string, status: string) =>
      `delivery ${deliveryId} is ${status}: it is still being attempted; resend it once it has succeeded or been dropped`,
  },
  /** A resend of a delivery whose event retention has already removed. */
  DELIVERY_EVENT_GONE: {
    status: 409,
    message: (deliveryId: string) => `the event of delivery ${deliveryId} is no longer stored`,
  },
  /** The token_minted hook blocked a token: a webhook failed, answered a non-object, or set a reserved claim. */
  TOKEN_MINTED_BLOCKED: {
    status: 403,
    message: (webhookId: string, reason: string) =>
      `the token_minted webhook ${webhookId} blocked the token: ${reason}`,
  },
  /** Synchronous hook calls are made during a sign-in; there is nothing to send again later. */
  SYNC_HOOK_NOT_RESENT: {
    status: 409,
    message: (deliveryId: string) =>
      `delivery ${deliveryId} is a sync_hook call, made during the sign-in it answered; only event deliveries are resent`,
  },
  INVALID_CURSOR: {
    status: 400,
    message: (cursor: string) =>
      `query.cursor: not a cursor this endpoint returned (got ${JSON.stringify(cursor)})`,
  },
});

export type WebhookErrorCode = ErrorCodeOf<typeof WebhookErrors>;
