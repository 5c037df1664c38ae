import { afterEach, beforeEach } from 'bun:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { systemClock } from '../../adapters/clock/system.ts';
import {
  createJetStreamBus,
  type JetStreamOptions,
  natsOutboxMigrations,
} from '../../adapters/nats/index.ts';
import { CONSUMER_NAME } from '../../adapters/nats/streams.ts';
import { createLogger } from '../../core/log.ts';
import { ack, type Delivered, type EventBus, type JsonValue } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { deleteStreams, freshPostgres, NATS_URL, uniquePrefix } from './support.ts';

const log = createLogger(process.env.TEST_LOG === '1' ? 'debug' : 'silent');

/**
 * JetStream buses on one Postgres schema (with the outbox and a `state` table) and one stream prefix,
 * fresh for each test of the calling file, and what their tests look at.
 */
export function outboxFixture() {
  let storage: Storage | undefined;
  const f = {
    get storage(): Storage {
      if (!storage) throw new Error('the fixture has no storage outside a test');
      return storage;
    },
    prefix: '',
    buses: [] as EventBus[],
    drop: async () => {},
    /** A bus of this test: `relay` false leaves its committed rows to others. */
    async bus(relay = true, more: Partial<JetStreamOptions> = {}) {
      const b = await createJetStreamBus({
        servers: [NATS_URL],
        streamPrefix: f.prefix,
        storage: f.storage,
        clock: systemClock,
        log,
        relay,
        relayPollMs: 100,
        relayMaxBackoffMs: 500,
        ...more,
      });
      f.buses.push(b);
      return b;
    },
    async outboxRows() {
      return Number((await f.storage.query<{ n: string }>(sql`select count(*) as n from bus_outbox`))[0]!.n);
    },
    /** The relay deletes a row in a transaction that may commit just after the consumer has the message. */
    async drained() {
      const until = Date.now() + 5000;
      while ((await f.outboxRows()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      return f.outboxRows();
    },
    /**
     * Waits until the topic's durable consumer has a pull request open (a consumer's loop asks for
     * messages once it has found or made the consumer): a message published after that comes on it.
     */
    async pullOpen(topic: string, ms = 10_000) {
      const nc = await connect({ servers: [NATS_URL] });
      try {
        const jsm = await jetstreamManager(nc);
        const until = Date.now() + ms;
        for (;;) {
          const waiting = await jsm.consumers.info(`${f.prefix}_${topic}`, CONSUMER_NAME).then(
            (i) => i.num_waiting,
            () => 0,
          );
          if (waiting > 0) return;
          if (Date.now() > until) throw new Error(`no pull request open on ${topic} after ${ms} ms`);
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await nc.close();
      }
    },
    /** How many messages the topic's stream ever stored (0 when it has none). */
    async storedInJetStream(topic: string) {
      const nc = await connect({ servers: [NATS_URL] });
      try {
        const info = await (await jetstreamManager(nc)).streams.info(`${f.prefix}_${topic}`);
        return info.state.last_seq;
      } catch {
        return 0;
      } finally {
        await nc.close();
      }
    },
    collect(b: EventBus, topic: string) {
      const seen: Array<{ id: string; payload: JsonValue }> = [];
      const sub = b.consume(topic, async (m: Delivered) => {
        seen.push({ id: m.id, payload: m.payload });
        return ack();
      });
      return { seen, sub };
    },
  };
  beforeEach(async () => {
    ({ storage, drop: f.drop } = await freshPostgres([natsOutboxMigrations]));
    await f.storage.query(sql`create table state (k text primary key)`);
    f.prefix = uniquePrefix();
    f.buses = [];
  });
  afterEach(async () => {
    for (const b of f.buses) await b.close();
    await deleteStreams(f.prefix);
    await f.drop();
  });
  return f;
}
