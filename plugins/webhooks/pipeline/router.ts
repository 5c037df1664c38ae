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
import type { FreshDeliveries } from './fresh-deliveries.ts';
import { type EventCache, type WebhookToCall, webhookOf } from './loader.ts';

export interface RouterDeps {
  storage: Storage;
  bus: EventBus;
  clock: Clock;
  log: Logger;
  /** Where each fanned-out event is left for the deliveries that follow. */
  events: EventCache;
  /** Where each delivery made is left, with its webhook, for its first attempt here. */
  fresh: FreshDeliveries;
}

/** A webhook with a matching trigger, as its deliveries' first attempt needs it. */
interface Target {
  webhookId: string;
  webhook: WebhookToCall;
}

interface FanOut {
  msgId: string;
  orgId: string;
  triggerName: string;
  event: ServiceEvent;
  targets: Target[];
}

const keyOf = (orgId: string, name: string) => `${orgId} ${name}`;

// The (org, name) pairs as a recordset, and their distinct orgs and names as arrays for the index.
const selectTriggers = prepared<{
  org_id: string;
  trigger_name: string;
  webhook_id: string;
  target_url: string;
  custom_headers: string | null;
  timeout_ns: string | number | null;
}>(
  'webhooks_route_targets',
  `select t.org_id, t.trigger_name, t.webhook_id, w.target_url, w.custom_headers, w.timeout_ns
   from webhook_triggers t
   join webhooks w on w.id = t.webhook_id and w.org_id = t.org_id
   join jsonb_to_recordset($1::jsonb) as k(o uuid, n text) on t.org_id = k.o and t.trigger_name = k.n
   where t.trigger_type = 'event' and t.org_id = any($2::uuid[]) and t.trigger_name = any($3::text[])
   order by t.webhook_id`,
);

/**
 * The router: the consumer of EVENTS_TOPIC. For each event it looks up the organization's webhooks with
 * a matching `event` trigger (an indexed query, no cache, so a trigger added a moment ago counts) and,
 * in one transaction, records one delivery per webhook and publishes one message per webhook on the
 * deliveries topic. Fan-outs that arrive together share that transaction (group commit); each still
 * commits whole or not at all. Once committed, each delivery is left in `fresh` with its webhook as the
 * lookup read it, so that its first attempt in this process need not read it back.
 */
export function createRouter(deps: RouterDeps) {
  const { storage, bus, clock } = deps;
  const { concurrency } = batchingFor(storage);

  const lookup = createBatchLoader<Target[]>(
    async (keys) => {
      const pairs = keys.map((k) => k.split(' ') as [string, string]);
      const rows = await selectTriggers(
        storage.db,
        JSON.stringify(pairs.map(([o, n]) => ({ o, n }))),
        `{${[...new Set(pairs.map(([o]) => o))].join(',')}}`,
        `{${[...new Set(pairs.map(([, n]) => n))].join(',')}}`,
      );
      const out = new Map<string, Target[]>();
      for (const r of rows) {
        const key = keyOf(r.org_id, r.trigger_name);
        const target = {
          webhookId: r.webhook_id,
          webhook: webhookOf(r.target_url, r.custom_headers, r.timeout_ns),
        };
        const list = out.get(key);
        if (list) list.push(target);
        else out.set(key, [target]);
      }
      return out;
    },
    { concurrency },
  );

  const fanOut = createGroupCommit<FanOut>({
    storage,
    // A transaction of a few thousand deliveries at most, however many webhooks share a trigger.
    weigh: (f) => f.targets.length,
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
      let made: Awaited<ReturnType<typeof createDeliveries>> = [];
      // Registered before the bus's own hook, which may hand the deliveries to a handler at once.
      tx.afterCommit(() => {
        for (const e of events.values()) deps.events.set(e.eventId, e.content);
        const planned = new Map(
          items.flatMap((f) => f.targets.map((t) => [`${f.msgId} ${t.webhookId}`, { f, t }])),
        );
        for (const m of made) {
          const { f, t: target } = planned.get(`${m.source} ${m.webhookId}`) ?? {};
          if (!f || !target) continue;
          deps.fresh.put({
            id: m.id,
            orgId: f.orgId,
            webhookId: m.webhookId,
            eventId: f.event.event_metadata.event_id,
            triggerType: 'event',
            triggerName: f.triggerName,
            status: 'pending',
            attempts: 0,
            firstAttemptAt: null,
            webhook: target.webhook,
            content: f.event as JsonValue,
          });
        }
      });
      made = await createDeliveries(
        tx,
        bus,
        now,
        [...events.values()],
        items.flatMap((f) =>
          f.targets.map(({ webhookId }) => ({
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
      const targets = (await lookup.load(keyOf(orgId, triggerName))) ?? [];
      if (targets.length === 0) return ack();
      await fanOut.add({ msgId: msg.id, orgId, triggerName, event: msg.payload, targets });
      return ack();
    },
    topic: EVENTS_TOPIC,
  };
}
