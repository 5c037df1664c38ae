import { jetstream } from '@nats-io/jetstream';
import { uuidv7 } from '../../core/ids.ts';
import type { Logger } from '../../core/log.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { ConsumeOptions, EventBus, Handler, Subscription } from '../../core/ports/event-bus.ts';
import { BusError, TOPIC_RE } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { openJetStream, redactServers } from './connection.ts';
import { runConsumer } from './consumer.ts';
import { migrations } from './migrations/index.ts';
import { createOutboxDeletes } from './outbox-deletes.ts';
import { createEagerPublisher } from './outbox-eager.ts';
import { createLocalHandOff } from './outbox-local.ts';
import { startOutboxRelay } from './outbox-relay.ts';
import { insertOutbox, outboxStats } from './statements.ts';
import { Topology } from './streams.ts';

export { migrations as natsOutboxMigrations };

export interface JetStreamOptions {
  /** NATS server URLs, such as `nats://127.0.0.1:4222`. */
  servers: string[];
  /** Names this bus's streams (`${prefix}_${topic}`) and subjects (`${prefix}.${topic}`). */
  streamPrefix: string;
  /** Holds the outbox of messages published inside a transaction (table `bus_outbox`). */
  storage: Storage;
  clock: Clock;
  log: Logger;
  /**
   * Move outbox rows to JetStream in this process: those its transactions commit, at once, and those
   * left behind by any process, by the relay. Off where other processes relay. @default true
   */
  relay?: boolean;
  /**
   * How old a row this process writes must be (from its transaction's start) before a relay moves it
   * rather than this process. @default 2000
   */
  relayMinAgeMs?: number;
  /**
   * A message published inside a transaction to a topic this process also consumes is handled by that
   * consumer straight after commit, its outbox row kept until the outcome is known, rather than sent
   * through JetStream and pulled back (see outbox-local.ts). Off: every message goes through
   * JetStream, shared by every replica's consumers. @default true
   */
  localHandOff?: boolean;
  /** How often the relay looks for rows committed elsewhere or left by a crashed replica. @default 500 */
  relayPollMs?: number;
  /** Outbox rows moved per relay transaction. @default 256 */
  relayBatchSize?: number;
  /** Longest wait between relay attempts while JetStream fails. @default 30000 */
  relayMaxBackoffMs?: number;
  /** How long to wait for the server: to connect, for an API reply, for a PubAck. @default 5000 */
  timeoutMs?: number;
  /** How long JetStream remembers a message id to drop a second publish of it. @default 120000 */
  duplicateWindowMs?: number;
  /** How long one pull request waits on the server for messages. @default 10000 */
  fetchExpiresMs?: number;
  /** The connection's name in the server's monitoring. @default 'identity-service' */
  name?: string;
}

const PREFIX_RE = /^[A-Za-z0-9_-]{1,64}$/;
const encoder = new TextEncoder();

/**
 * The EventBus on NATS JetStream, for many replicas: one work-queue stream and one shared durable pull
 * consumer per topic. A publish resolves once JetStream has stored the message; a publish inside a
 * Storage transaction goes through the `bus_outbox` table, so it commits or rolls back with the
 * transaction, and is then handled by a consumer of this process or published to JetStream.
 *
 * @example
 * const bus = await createJetStreamBus({ servers: ['nats://127.0.0.1:4222'], streamPrefix: 'IDS', storage, clock, log });
 * await bus.publish('events', [{ payload: { hello: 'world' } }]);
 */
export async function createJetStreamBus(options: JetStreamOptions): Promise<EventBus> {
  const { storage, clock } = options;
  if (!PREFIX_RE.test(options.streamPrefix))
    throw new BusError(
      'INVALID_TOPIC',
      `streamPrefix ${JSON.stringify(options.streamPrefix)} must match ${PREFIX_RE}`,
    );
  const log = options.log.child({ component: 'jetstream' });
  const timeoutMs = options.timeoutMs ?? 5000;
  const fetchExpiresMs = Math.max(1000, options.fetchExpiresMs ?? 10_000);
  const where = redactServers(options.servers);
  const { nc, jsm } = await openJetStream({
    servers: options.servers,
    name: options.name ?? 'identity-service',
    timeoutMs,
    log,
    where,
  });
  const topology = new Topology({
    jsm,
    js: jetstream(nc, { timeout: timeoutMs }),
    prefix: options.streamPrefix,
    duplicateWindowMs: options.duplicateWindowMs ?? 120_000,
    timeoutMs,
  });
  const relay =
    options.relay === false
      ? undefined
      : startOutboxRelay({
          storage,
          topology,
          log,
          pollMs: options.relayPollMs ?? 500,
          batchSize: options.relayBatchSize ?? 256,
          maxBackoffMs: options.relayMaxBackoffMs ?? 30_000,
        });
  const minAgeMs = Math.max(0, options.relayMinAgeMs ?? 2000);
  const deletes = createOutboxDeletes(storage, log);
  const eager = options.relay === false ? undefined : createEagerPublisher({ topology, deletes, log });
  const local =
    options.localHandOff === false
      ? undefined
      : createLocalHandOff({ storage, clock, deletes, log, spill: (rows) => eager?.publish(rows) });
  const subscriptions = new Set<Subscription>();
  const publishing = new Set<Promise<unknown>>();
  let closed = false;

  const check = (topic: string) => {
    if (closed) throw new BusError('CLOSED', 'the bus is closed');
    if (!TOPIC_RE.test(topic))
      throw new BusError('INVALID_TOPIC', `topic ${JSON.stringify(topic)} must match ${TOPIC_RE}`);
  };

  return {
    kind: 'jetstream',
    async publish(topic, messages, opts) {
      check(topic);
      if (messages.length === 0) return;
      const now = clock.now();
      const rows = messages.map((m) => ({ topic, msgId: m.id ?? uuidv7(now), payload: m.payload }));
      if (opts?.tx) {
        // Refuse now what JetStream would refuse later: such a row would fail the relay for ever.
        // The subject and the Nats-Msg-Id header count towards the server's limit too.
        const max = (nc.info?.max_payload ?? Number.POSITIVE_INFINITY) - 256;
        for (const r of rows) {
          const size = encoder.encode(JSON.stringify(r.payload)).length;
          if (size > max)
            throw new BusError(
              'PUBLISH_FAILED',
              `message ${r.msgId} is ${size} bytes, more than the ${max} the NATS server accepts`,
            );
        }
        // A consumer here may take them: held for it (outbox-local.ts).
        const hold = local?.hold(topic);
        const written = await insertOutbox(
          opts.tx.db,
          rows.map((r) => ({
            topic: r.topic,
            msg_id: r.msgId,
            payload: r.payload,
            hold_ms: hold?.holdMs ?? minAgeMs,
            attempts: hold?.attempts ?? 0,
          })),
        );
        if (eager || hold) {
          const byId = new Map(rows.map((r) => [r.msgId, r]));
          const committed = written.map((w) => ({
            ...byId.get(w.msg_id)!,
            seq: w.seq,
            held: hold && { leaseMs: hold.leaseMs, dueMs: Number(w.due_ms) },
          }));
          opts.tx.afterCommit(() => {
            const left = local ? local.take(committed) : committed;
            eager?.publish(left);
          });
        }
        return;
      }
      const sent = Promise.all(rows.map((r) => topology.publish(topic, r.msgId, r.payload)));
      publishing.add(sent);
      try {
        await sent;
      } catch (cause) {
        if (cause instanceof BusError) throw cause;
        throw new BusError(
          'PUBLISH_FAILED',
          `publishing to ${topic} on NATS at ${where} failed: ${(cause as Error).message}`,
          { cause },
        );
      } finally {
        publishing.delete(sent);
      }
    },
    consume<T>(topic: string, handler: Handler<T>, opts: ConsumeOptions = {}) {
      check(topic);
      const sub = runConsumer({
        ...opts,
        topology,
        clock,
        log,
        topic,
        handler,
        fetchExpiresMs,
        flush: () => nc.flush(),
      });
      const unhand = local?.add(topic, sub);
      subscriptions.add(sub);
      return {
        stop: async () => {
          unhand?.();
          subscriptions.delete(sub);
          await sub.stop();
        },
      };
    },
    async ping() {
      if (closed) throw new BusError('CLOSED', 'the bus is closed');
      try {
        await jsm.getAccountInfo();
      } catch (cause) {
        throw new BusError('UNAVAILABLE', `cannot reach JetStream at ${where}: ${(cause as Error).message}`, {
          cause,
        });
      }
    },
    async stats() {
      if (closed) throw new BusError('CLOSED', 'the bus is closed');
      const outbox = await outboxStats(storage.db);
      const topics = [...new Set([...topology.topics(), ...outbox.keys()])].sort();
      const states = await Promise.all(topics.map((t) => topology.state(t)));
      // JetStream and the outbox keep real time; ages are answered on the bus's clock.
      const now = Date.now();
      return topics.map((topic, i) => {
        const stream = states[i]!;
        const waiting = outbox.get(topic);
        const oldest = Math.min(stream.oldest ?? now, waiting?.oldest ?? now);
        return {
          topic,
          depth: stream.depth + (waiting?.depth ?? 0),
          oldestAgeMs: Math.max(0, now - oldest) * clock.rate,
        };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      subscriptions.clear();
      await relay?.stop();
      await eager?.close();
      await local?.close();
      await Promise.allSettled(publishing);
      await nc.drain().catch(() => {});
    },
  };
}
