import type { Logger } from '../log.ts';
import type { CounterSeries } from '../metrics/types.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventBus, JsonValue, OutgoingMessage } from '../ports/event-bus.ts';
import type { Transaction } from '../ports/storage.ts';
import { eventDefinition } from './catalogue/index.ts';
import { EventErrors } from './errors.ts';
import { buildEvent } from './metadata.ts';
import { EVENTS_TOPIC, type EventPublisher, type ServiceEvent } from './types.ts';

/** The ports the publisher works with. */
export interface EventPublisherOptions {
  readonly bus: EventBus;
  readonly clock: Clock;
  readonly log: Logger;
  /** The counter of an event name, counted once each event is durable. @default none */
  readonly published?: (eventName: string) => CounterSeries;
}

// The message id is the event_id: a publish retried after an ambiguous failure (a timeout after the
// commit) carries the same id, and the bus keeps one message where it can tell (pg-queue's primary key,
// JetStream's Nats-Msg-Id). Webhook receivers de-duplicate on `sub` = event_id for the rest.
const toMessage = (event: ServiceEvent): OutgoingMessage => ({
  id: event.event_metadata.event_id,
  payload: event as JsonValue,
});

/**
 * The EventPublisher on the EventBus port: validates members against the catalogue, fills
 * event_metadata and publishes durably on EVENTS_TOPIC (resolved = persisted). With `tx`, the event
 * commits or rolls back with that transaction and is delivered only after the commit.
 *
 * @example
 * const events = createEventPublisher({ bus, clock, log });
 * await storage.transaction(async (tx) => {
 *   // ... write the role ...
 *   await events.publish(orgId, 'RoleDeleted_v1', { role_name: 'billing-admin' }, { tx });
 * });
 */
export function createEventPublisher(options: EventPublisherOptions): EventPublisher {
  const { bus, clock, log } = options;
  const published = options.published;
  /** Counts events once durable: at once, or when the transaction they went out in commits. */
  const count = (events: readonly ServiceEvent[], tx: Transaction | undefined) => {
    if (!published) return;
    const add = () => {
      for (const e of events) published(e.event_metadata.event_name).inc();
    };
    if (tx) tx.afterCommit(add);
    else add();
  };
  const publish = async (
    orgId: string,
    eventName: string,
    members: object,
    publishOptions: { tx?: Transaction; isTest?: boolean } = {},
  ): Promise<ServiceEvent> => {
    const definition = eventDefinition(eventName);
    if (!definition) throw EventErrors.UNKNOWN_EVENT(eventName);
    const event = buildEvent(definition, { orgId, members, clock, isTest: publishOptions.isTest });
    await bus.publish(EVENTS_TOPIC, [toMessage(event)], { tx: publishOptions.tx });
    count([event], publishOptions.tx);
    if (log.enabled('debug'))
      log.debug('event published', {
        event_id: event.event_metadata.event_id,
        event_name: event.event_metadata.event_name,
        organization_id: orgId,
        in_transaction: publishOptions.tx !== undefined,
      });
    return event;
  };
  return {
    publish,
    publishByName: publish,
    async publishBuilt(events, publishOptions = {}) {
      if (events.length === 0) return;
      await bus.publish(EVENTS_TOPIC, events.map(toMessage), { tx: publishOptions.tx });
      count(events, publishOptions.tx);
      if (log.enabled('debug')) log.debug('events published', { count: events.length });
    },
  };
}
