import { prepared } from '../../../core/db/prepared.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { EventBus, JsonValue } from '../../../core/ports/event-bus.ts';
import type { Transaction } from '../../../core/ports/storage.ts';

/** The bus topic of deliveries: one message per (event, webhook), whose id is the delivery's id. */
export const DELIVERIES_TOPIC = 'webhook-deliveries';

/** The payload of a message on DELIVERIES_TOPIC. */
export interface DeliveryMessage {
  delivery_id: string;
}

/** A delivery to create. */
export interface NewDelivery {
  orgId: string;
  webhookId: string;
  eventId: string;
  /** What made it (the router's bus message id, or `resend:<uuid>`): one delivery per webhook and source. */
  source: string;
  triggerType: string;
  triggerName: string;
  resendOf?: string;
}

/** An event to store once for its deliveries. */
export interface StoredEvent {
  eventId: string;
  orgId: string;
  eventName: string;
  content: JsonValue;
}

// The events and the deliveries in one statement: one round trip, prepared once per connection.
const insertDeliveries = prepared<{ id: string; webhook_id: string; source: string }>(
  'webhooks_insert_deliveries',
  `with stored as (
    insert into webhook_events (event_id, org_id, event_name, content, created_at)
    select * from jsonb_to_recordset($1::jsonb)
      as e(event_id uuid, org_id uuid, event_name text, content jsonb, created_at bigint)
    on conflict (event_id) do nothing
  )
  insert into webhook_deliveries
    (id, org_id, webhook_id, event_id, source, trigger_type, trigger_name, resend_of, status, attempts, created_at)
  select r.*, 'pending', 0, $3::bigint from jsonb_to_recordset($2::jsonb)
    as r(id uuid, org_id uuid, webhook_id uuid, event_id uuid, source text, trigger_type text,
         trigger_name text, resend_of uuid)
  on conflict (webhook_id, source) do nothing
  returning id, webhook_id, source`,
);

/**
 * Records deliveries and publishes one bus message for each, inside the caller's transaction, so the
 * rows and the messages commit together or not at all. A delivery whose (webhook, source) exists already
 * (the router handling the same message again after a crash) is neither recorded nor published twice.
 * Returns the ids of the deliveries made, in no particular order.
 */
export async function createDeliveries(
  tx: Transaction,
  bus: EventBus,
  now: number,
  events: readonly StoredEvent[],
  deliveries: readonly NewDelivery[],
): Promise<Array<{ id: string; webhookId: string; source: string }>> {
  if (deliveries.length === 0) return [];
  const eventRows = events.map((e) => ({
    event_id: e.eventId,
    org_id: e.orgId,
    event_name: e.eventName,
    content: e.content,
    created_at: now,
  }));
  const rows = deliveries.map((d) => ({
    id: uuidv7(now),
    org_id: d.orgId,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    source: d.source,
    trigger_type: d.triggerType,
    trigger_name: d.triggerName,
    resend_of: d.resendOf ?? null,
  }));
  const made = await insertDeliveries(tx.db, JSON.stringify(eventRows), JSON.stringify(rows), now);
  await bus.publish(
    DELIVERIES_TOPIC,
    made.map((m) => ({ id: m.id, payload: { delivery_id: m.id } satisfies DeliveryMessage })),
    { tx },
  );
  return made.map((m) => ({ id: m.id, webhookId: m.webhook_id, source: m.source }));
}
