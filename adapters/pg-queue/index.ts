import { uuidv7 } from '../../core/ids.ts';
import type { Logger } from '../../core/log.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type {
  ConsumeOptions,
  EventBus,
  Handler,
  OutgoingMessage,
  Subscription,
} from '../../core/ports/event-bus.ts';
import { BusError, TOPIC_RE } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { yieldToEventLoop } from '../../core/runtime.ts';
import { runConsumer } from './consumer.ts';
import { migrations } from './migrations/index.ts';
import { insertMessages, type QueueRow, topicStats } from './statements.ts';
import { Wakeups } from './wakeups.ts';

export { migrations as pgQueueMigrations };

export interface PgQueueOptions {
  storage: Storage;
  clock: Clock;
  log: Logger;
  /**
   * How often an idle consumer looks for work it was not woken for (other replicas' publishes, expired
   * leases). @default 500 on a pool; 2000 on a single connection (PGlite), where every publish is this
   * process's own and wakes its consumers, so polling finds only leases past their end
   */
  pollMs?: number;
}

export const channelOf = (topic: string) => `bus_${topic.replaceAll('-', '_')}`;

/**
 * The EventBus on a Postgres table: works on PGlite and on Postgres with many replicas. Publishes are
 * grouped into one INSERT (group commit); consumers claim batches with FOR UPDATE SKIP LOCKED and a
 * lease, so a crashed consumer's messages come back when the lease ends.
 */
export function createPgQueueBus(options: PgQueueOptions): EventBus {
  const { storage, clock, log } = options;
  // Each poll is two statements per topic: on PGlite, four topics polling every 500 ms kept about 6 % of
  // a core busy in an idle server, and took as much from every request of a busy one.
  const pollMs = options.pollMs ?? (storage.writeConcurrency <= 1 ? 2000 : 500);
  const wakeups = new Wakeups();
  const subscriptions = new Set<Subscription>();
  /** Topics this process has used: their stats are answered (as 0) even when they hold nothing. */
  const topics = new Set<string>();
  let pending: Array<{
    rows: QueueRow[];
    topics: Set<string>;
    resolve: () => void;
    reject: (e: unknown) => void;
  }> = [];
  let flushing: Promise<void> | null = null;
  let closed = false;
  /**
   * When a batch starts. On a pool, publishes that arrive while a flush runs join the next one. On a
   * single connection (PGlite) a statement runs on this thread and answers in microtasks, so a request
   * runs from arrival to publish without letting any other in, and a flush started at once would carry
   * one message each time: one commit per event. Waiting one turn of the event loop lets the requests
   * already waiting (network reads, timers) reach their publish first; alone, a publish waits a few
   * microseconds more.
   */
  const gather = storage.writeConcurrency <= 1 ? yieldToEventLoop : () => Promise.resolve();

  const rowsFor = (topic: string, messages: readonly OutgoingMessage[]) => {
    if (!TOPIC_RE.test(topic))
      throw new BusError('INVALID_TOPIC', `topic ${JSON.stringify(topic)} must match ${TOPIC_RE}`);
    topics.add(topic);
    const now = clock.now();
    return messages.map(
      (m): QueueRow => ({
        topic,
        msg_id: m.id ?? uuidv7(now),
        payload: m.payload,
        available_at: now,
        published_at: now,
      }),
    );
  };

  async function flush(): Promise<void> {
    while (pending.length) {
      const batch = pending;
      pending = [];
      const topics = new Set(batch.flatMap((b) => [...b.topics]));
      try {
        // One statement: atomic on its own, and its NOTIFY goes out when it commits.
        await insertMessages(
          storage.db,
          batch.flatMap((b) => b.rows),
        );
        for (const t of topics) wakeups.wake(t);
        for (const b of batch) b.resolve();
      } catch (cause) {
        const err = new BusError('PUBLISH_FAILED', `publish failed: ${(cause as Error).message}`, { cause });
        for (const b of batch) b.reject(err);
      }
    }
    flushing = null;
  }

  return {
    kind: 'pg-queue',
    async publish(topic, messages, opts) {
      if (closed) throw new BusError('CLOSED', 'the bus is closed');
      if (messages.length === 0) return;
      const rows = rowsFor(topic, messages);
      if (opts?.tx) {
        await insertMessages(opts.tx.db, rows);
        opts.tx.afterCommit(() => wakeups.wake(topic));
        return;
      }
      await new Promise<void>((resolve, reject) => {
        pending.push({ rows, topics: new Set([topic]), resolve, reject });
        // Every publish arriving while a flush runs joins the next one: one commit for many messages.
        flushing ??= gather().then(flush);
      });
    },
    consume<T>(topic: string, handler: Handler<T>, opts: ConsumeOptions = {}) {
      if (!TOPIC_RE.test(topic))
        throw new BusError('INVALID_TOPIC', `topic ${JSON.stringify(topic)} must match ${TOPIC_RE}`);
      topics.add(topic);
      const sub = runConsumer({
        storage,
        clock,
        log,
        topic,
        handler,
        wakeups,
        pollMs,
        channel: channelOf(topic),
        ...opts,
      });
      subscriptions.add(sub);
      return {
        stop: async () => {
          subscriptions.delete(sub);
          await sub.stop();
        },
      };
    },
    async ping() {
      await storage.ping();
    },
    async stats() {
      const now = clock.now();
      const held = new Map((await topicStats(storage.db)).map((r) => [r.topic, r]));
      const names = new Set([...topics, ...held.keys()]);
      return [...names].sort().map((topic) => {
        const r = held.get(topic);
        return {
          topic,
          depth: r?.depth ?? 0,
          oldestAgeMs: r?.oldest == null ? 0 : Math.max(0, now - r.oldest),
        };
      });
    },
    async close() {
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      if (flushing) await flushing;
    },
  };
}
