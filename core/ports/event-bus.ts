import type { Transaction } from './storage.ts';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A message to publish. `id` de-duplicates: publishing the same id twice delivers it once where the adapter can tell. */
export interface OutgoingMessage {
  id?: string;
  payload: JsonValue;
}

/** A message handed to a consumer. */
export interface Delivered<T = JsonValue> {
  readonly id: string;
  readonly topic: string;
  readonly payload: T;
  /** 1 on the first delivery, then 2, 3, ... (redeliveries after a crash or a retry count too). */
  readonly attempt: number;
}

/** What a handler decides: done, try again after a delay, or give up on the message. */
export type Outcome = { kind: 'ack' } | { kind: 'retry'; delayMs: number } | { kind: 'drop'; reason: string };
export const ack = (): Outcome => ({ kind: 'ack' });
export const retry = (delayMs: number): Outcome => ({ kind: 'retry', delayMs });
export const drop = (reason: string): Outcome => ({ kind: 'drop', reason });

export type Handler<T = JsonValue> = (msg: Delivered<T>) => Promise<Outcome>;

export interface ConsumeOptions {
  /** Handlers running at once in this process. @default 32 */
  concurrency?: number;
  /** A claimed message not settled within the lease comes back to any consumer. @default 30000 */
  leaseMs?: number;
  /** Delay before retrying a message whose handler threw. @default 1000 */
  errorRetryMs?: number;
}

/** What a topic holds now, as the metrics gauge it on every scrape. */
export interface TopicStats {
  readonly topic: string;
  /** Messages published and not yet acknowledged or dropped: waiting, in a handler, or waiting to be retried. */
  readonly depth: number;
  /** Milliseconds since the oldest of them was published (on the bus's clock); 0 when there is none. */
  readonly oldestAgeMs: number;
}

export interface Subscription {
  /** Stops claiming new messages and waits for the handlers in flight. */
  stop(): Promise<void>;
}

/**
 * The EventBus port. Each topic is a work queue shared by every consumer of it on every replica:
 * publish is durable once it resolves, delivery is at least once, and a crashed consumer's messages
 * come back after their lease.
 */
export interface EventBus {
  readonly kind: 'pg-queue' | 'jetstream';
  /**
   * Publishes durably. With `tx`, the messages commit or roll back with that transaction and are
   * delivered only after it commits.
   */
  publish(topic: string, messages: readonly OutgoingMessage[], options?: { tx?: Transaction }): Promise<void>;
  consume<T = JsonValue>(topic: string, handler: Handler<T>, options?: ConsumeOptions): Subscription;
  ping(): Promise<void>;
  /**
   * The depth and oldest message of every topic this process publishes or consumes (and any other the
   * bus holds): one query or API call per scrape, never on a hot path.
   */
  stats(): Promise<TopicStats[]>;
  close(): Promise<void>;
}

export class BusError extends Error {
  constructor(
    readonly code: 'UNAVAILABLE' | 'PUBLISH_FAILED' | 'CLOSED' | 'INVALID_TOPIC',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BusError';
  }
}

export const TOPIC_RE = /^[a-z][a-z0-9-]{0,62}$/;
