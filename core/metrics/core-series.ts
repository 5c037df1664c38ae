import type { MessageCounters, MessageOutcome } from '../messaging/counters.ts';
import type { EventBus, TopicStats } from '../ports/event-bus.ts';
import type { CounterSeries, Metrics } from './types.ts';

/**
 * The queue's depth and the age of its oldest message, per topic (`events`, `deliveries`, `messages`),
 * read from the bus on every scrape: one query (pg-queue) or one stream lookup per topic (JetStream)
 * answers both gauges.
 */
export function registerQueueGauges(metrics: Metrics, bus: EventBus): void {
  let reading: Promise<TopicStats[]> | undefined;
  // Both gauges are collected in one scrape: they share one read of the bus.
  const stats = () => {
    if (!reading) {
      reading = bus.stats();
      const forget = () => {
        reading = undefined;
      };
      reading.then(forget, forget);
    }
    return reading;
  };
  metrics.gauge({
    name: 'identity_queue_depth',
    help: 'Messages published on a bus topic and not yet settled: waiting, in a handler or waiting to be retried',
    labelNames: ['topic'],
    async collect(set) {
      for (const s of await stats()) set({ topic: s.topic }, s.depth);
    },
  });
  metrics.gauge({
    name: 'identity_queue_oldest_age_seconds',
    help: 'Seconds since the oldest message not yet settled on a bus topic was published (0 when none)',
    labelNames: ['topic'],
    async collect(set) {
      for (const s of await stats()) set({ topic: s.topic }, s.oldestAgeMs / 1000);
    },
  });
}

/**
 * Message outcomes (sent, retried, dropped) by kind, counted into the metrics and passed on to the
 * counters a caller gave (tests watch them).
 */
export function messageCounters(metrics: Metrics, also?: MessageCounters): MessageCounters {
  const messages = metrics.counter({
    name: 'identity_messages_total',
    help: 'Messages to people by outcome (sent, retried, dropped) and kind (the template)',
    labelNames: ['outcome', 'kind'],
  });
  return {
    count(outcome: MessageOutcome, kind: string) {
      messages.labels({ outcome, kind }).inc();
      also?.count(outcome, kind);
    },
  };
}

/** Events published, by name: counted once durable (with a transaction, once it commits). */
export function publishedEvents(metrics: Metrics): (eventName: string) => CounterSeries {
  const published = metrics.counter({
    name: 'identity_events_published_total',
    help: 'Catalogue events published on the bus, by event name (counted once durable)',
    labelNames: ['event_name'],
  });
  return (eventName) => published.labels({ event_name: eventName });
}
