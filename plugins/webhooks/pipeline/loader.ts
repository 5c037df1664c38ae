import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { batchingFor } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import { isUuid } from '../../../core/ids.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { FreshDeliveries } from './fresh-deliveries.ts';

/** What one attempt needs: the delivery, its webhook (null once deleted) and the event. */
export interface DeliveryToAttempt {
  id: string;
  orgId: string;
  webhookId: string;
  eventId: string;
  triggerType: string;
  triggerName: string;
  status: string;
  attempts: number;
  firstAttemptAt: number | null;
  webhook: { targetUrl: string; customHeaders: string | null; timeoutNs: number | null } | null;
  /** The event; null when it is no longer stored. */
  content: JsonValue | null;
}

/** What an attempt needs of a webhook. */
export type WebhookToCall = NonNullable<DeliveryToAttempt['webhook']>;

/** A webhook's columns as the delivery loader and the router's lookup read them. */
export const webhookOf = (
  targetUrl: string,
  customHeaders: string | null,
  timeoutNs: string | number | null,
): WebhookToCall => ({
  targetUrl,
  customHeaders,
  timeoutNs: timeoutNs === null ? null : Number(timeoutNs),
});

interface Row {
  id: string;
  org_id: string;
  webhook_id: string;
  event_id: string;
  trigger_type: string;
  trigger_name: string;
  status: string;
  attempts: number;
  first_attempt_at: string | number | null;
  target_url: string | null;
  custom_headers: string | null;
  timeout_ns: string | number | null;
}

/**
 * Recent events by event_id. An event never changes once stored, so a copy is as good as the row: the
 * router puts each event it fans out here, and the deliveries of that event (one per webhook, most
 * often in this same process moments later) read it without a query. A miss reads the database.
 */
export function createEventCache(limit = 4096) {
  const events = new Map<string, JsonValue>();
  return {
    get: (id: string) => events.get(id),
    set(id: string, content: JsonValue) {
      if (events.size >= limit) events.delete(events.keys().next().value!);
      events.set(id, content);
    },
  };
}

export type EventCache = ReturnType<typeof createEventCache>;

const arrayOf = (ids: Iterable<string>) => `{${[...ids].join(',')}}`;

// One text parameter each (a Postgres array literal): the statement is the same whatever the batch size.
const selectDeliveries = prepared<Row>(
  null,
  `select d.id, d.org_id, d.webhook_id, d.event_id, d.trigger_type, d.trigger_name, d.status, d.attempts,
          d.first_attempt_at, w.target_url, w.custom_headers, w.timeout_ns
   from webhook_deliveries d
   left join webhooks w on w.id = d.webhook_id and w.org_id = d.org_id
   where d.id = any($1::uuid[])`,
);
const selectEvents = prepared<{ event_id: string; content: JsonValue | string }>(
  null,
  `select event_id, content from webhook_events where event_id = any($1::uuid[])`,
);

/**
 * Loads deliveries for their attempts, batched (see createBatchLoader): one query for the deliveries
 * and their webhooks, another only for events the cache does not hold. A first attempt of a delivery
 * this process's router has just committed starts from what the router wrote and read (`fresh`: the
 * webhook as it was a moment before); every other attempt reads the webhook again, so a deleted
 * webhook gets no further attempt.
 */
export function createDeliveryLoader(storage: Storage, cache: EventCache, fresh: FreshDeliveries) {
  async function load(ids: string[]): Promise<Map<string, DeliveryToAttempt>> {
    const valid = ids.filter(isUuid);
    const out = new Map<string, DeliveryToAttempt>();
    if (valid.length === 0) return out;
    const rows = await selectDeliveries(storage.db, arrayOf(valid));
    // The contents are taken from the cache once, here: other loads and the router replace its entries
    // while the query below runs, and an entry read again after it could be gone.
    const contents = new Map<string, JsonValue>();
    const missing = new Set<string>();
    for (const r of rows) {
      const hit = cache.get(r.event_id);
      if (hit === undefined) missing.add(r.event_id);
      else contents.set(r.event_id, hit);
    }
    if (missing.size > 0) {
      const found = await selectEvents(storage.db, arrayOf(missing));
      for (const e of found) {
        const content = typeof e.content === 'string' ? (JSON.parse(e.content) as JsonValue) : e.content;
        contents.set(e.event_id, content);
        cache.set(e.event_id, content);
      }
    }
    for (const r of rows)
      out.set(r.id, {
        id: r.id,
        orgId: r.org_id,
        webhookId: r.webhook_id,
        eventId: r.event_id,
        triggerType: r.trigger_type,
        triggerName: r.trigger_name,
        status: r.status,
        attempts: Number(r.attempts),
        firstAttemptAt: r.first_attempt_at === null ? null : Number(r.first_attempt_at),
        webhook: r.target_url === null ? null : webhookOf(r.target_url, r.custom_headers, r.timeout_ns),
        content: contents.get(r.event_id) ?? null,
      });
    return out;
  }
  const batches = createBatchLoader(load, { concurrency: batchingFor(storage).concurrency });
  return {
    /** The delivery `id` for the message's `attempt` (1 for the first), or undefined when there is none. */
    load(id: string, attempt: number): Promise<DeliveryToAttempt | undefined> {
      const d = attempt === 1 ? fresh.take(id) : undefined;
      return d ? Promise.resolve(d) : batches.load(id);
    },
  };
}
