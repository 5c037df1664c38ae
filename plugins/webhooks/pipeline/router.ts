import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import { acceptedTriggerName } from '../../../core/events/index.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import { isUuid } from '../../../core/ids.ts';
import type { Logger } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { ack, type Delivered, drop, type EventBus, type JsonValue } from '../../../core/ports/event-bus.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { createDeliveries } from './enqueue.ts';
import type { EventCache } from './loader.ts';

export interface RouterDeps {
  storage: Storage;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Where each fanned-out event is left for the deliveries that follow. */
  events: EventCache;
}

interface FanOut {
  msgId: string;
  orgId: string;
  triggerName: string;
  event: ServiceEvent;
  webhookIds: string[];
}

const keyOf = (orgId: string, name: string) => `${orgId} ${name}`;

// The (org, name) pairs as a recordset, and their distinct orgs and names as arrays for the index.
const selectTriggers = prepared<{ org_id: string; trigger_name: string; webhook_id: string }>(
  'webhooks_route_triggers',
  `select t.org_id, t.trigger_name, t.webhook_id
   from webhook_triggers t
   join jsonb_to_recordset($1::jsonb) as k(o uuid, n text) on t.org_id = k.o and t.trigger_name = k.n
   where t.trigger_type = 'event' and t.org_id = any($2::uuid[]) and t.trigger_name = any($3::text[])
   order by t.webhook_id`,
);

/**
 * The router: the consumer of EVENTS_TOPIC. For each event it looks up the organization's webhooks with
 * a matching `event` trigger (an indexed query, no cache, so a trigger added a moment ago counts) and,
 * in one transaction, records one delivery per webhook and publishes one message per webhook on the
 * deliveries topic. Fan-outs that arrive together share that transaction (group commit); each still
 * commits whole or not at all.
 */
export function createRouter(deps: RouterDeps) {
  const { storage, bus, clock } = deps;
  const { concurrency } = batchingFor(storage);

  const lookup = createBatchLoader<string[]>(
    async (keys) => {
      const pairs = keys.map((k) => k.split(' ') as [string, string]);
      const rows = await selectTriggers(
        storage.db,
        JSON.stringify(pairs.map(([o, n]) => ({ o, n }))),
        `{${[...new Set(pairs.map(([o]) => o))].join(',')}}`,
        `{${[...new Set(pairs.map(([, n]) => n))].join(',')}}`,
      );
      const out = new Map<string, string[]>();
      for (const r of rows) {
        const key = keyOf(r.org_id, r.trigger_name);
        const list = out.get(key);
        if (list) list.push(r.webhook_id);
        else out.set(key, [r.webhook_id]);
      }
      return out;
    },
    { concurrency },
  );

  const fanOut = createGroupCommit<FanOut>({
    storage,
    // A transaction of a few thousand deliveries at most, however many webhooks share a trigger.
    weigh: (f) => f.webhookIds.length,
    maxWeight: 4096,
    concurrency,
    async write(tx, items) {
      const now = clock.now();
      const events = new Map(
        items.map((f) => [
          f.event.event_metadata.event_id,
          {
            eventId: f.event.event_metadata.event_id,
            orgId: f.orgId,
            eventName: f.triggerName,
            content: f.event as JsonValue,
          },
        ]),
      );
      tx.afterCommit(() => {
        for (const e of events.values()) deps.events.set(e.eventId, e.content);
      });
      await createDeliveries(
        tx,
        bus,
        now,
        [...events.values()],
        items.flatMap((f) =>
          f.webhookIds.map((webhookId) => ({
            orgId: f.orgId,
            webhookId,
            eventId: f.event.event_metadata.event_id,
            source: f.msgId,
            triggerType: 'event',
            triggerName: f.triggerName,
          })),
        ),
      );
      return items.map(() => undefined);
    },
  });

  return {
    async handle(msg: Delivered<ServiceEvent>) {
      const meta = msg.payload?.event_metadata;
      if (!meta?.event_id || !meta.event_name) return drop('not an event: no event_metadata');
      if (!isUuid(meta.event_id)) return drop(`event_id ${JSON.stringify(meta.event_id)} is not a UUID`);
      const orgId = meta.organization_id ?? meta.root_organization_id;
      // Events no trigger may name (cloud-provider events) have no webhooks to reach.
      const triggerName = acceptedTriggerName(meta.event_name);
      if (!orgId || !isUuid(orgId) || !triggerName) return ack();
      const webhookIds = (await lookup.load(keyOf(orgId, triggerName))) ?? [];
      if (webhookIds.length === 0) return ack();
      await fanOut.add({ msgId: msg.id, orgId, triggerName, event: msg.payload, webhookIds });
      return ack();
    },
    topic: EVENTS_TOPIC,
  };
}
