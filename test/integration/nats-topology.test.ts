import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import { type JetStreamManager, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createLogger } from '../../core/log.ts';
import { ack, type EventBus } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { waitFor } from '../contract/event-bus.contract.ts';
import { deleteStreams, freshPostgres, NATS_URL, uniquePrefix } from './support.ts';

const log = createLogger('silent');

describe('JetStream bus: streams and consumers', () => {
  let storage: Storage;
  let drop: () => Promise<void>;
  let prefix: string;
  let buses: EventBus[];
  let nc: NatsConnection;
  let jsm: JetStreamManager;

  const bus = async () => {
    const b = await createJetStreamBus({
      servers: [NATS_URL],
      streamPrefix: prefix,
      storage,
      clock: systemClock,
      log,
    });
    buses.push(b);
    return b;
  };
  const ackWaitMs = async (stream: string) =>
    ((await jsm.consumers.info(stream, 'workers')).config.ack_wait ?? 0) / 1e6;

  beforeEach(async () => {
    ({ storage, drop } = await freshPostgres([natsOutboxMigrations]));
    prefix = uniquePrefix();
    buses = [];
    nc = await connect({ servers: [NATS_URL] });
    jsm = await jetstreamManager(nc);
  });
  afterEach(async () => {
    for (const b of buses) await b.close();
    await nc.close();
    await deleteStreams(prefix);
    await drop();
  });

  it('names a work-queue stream after the prefix and topic, and makes one consumer for every replica', async () => {
    const replicas = await Promise.all([bus(), bus(), bus()]);
    const seen = new Set<number>();
    const subs = replicas.map((b) =>
      b.consume('order-placed', async (m) => {
        seen.add(m.payload as number);
        return ack();
      }),
    );
    await Promise.all(replicas.map((b, i) => b.publish('order-placed', [{ payload: i }])));
    await waitFor(() => seen.size === 3, 10_000, 'a message from each replica');
    await Promise.all(subs.map((s) => s.stop()));
    const info = await jsm.streams.info(`${prefix}_order_placed`);
    expect(info.config.subjects).toEqual([`${prefix}.order-placed`]);
    expect(info.config.retention).toBe(RetentionPolicy.Workqueue);
    const consumers: string[] = [];
    for await (const c of jsm.consumers.list(`${prefix}_order_placed`)) consumers.push(c.name);
    expect(consumers).toEqual(['workers']);
  });

  it('lets replicas publish to a new topic at once: the stream is made once and no publish fails', async () => {
    const replicas = await Promise.all([bus(), bus(), bus(), bus()]);
    // nats-server 2.9 may answer one of two simultaneous creates "subjects overlap" rather than
    // "name in use": seen about once in 200 rounds of three, so many rounds of four.
    for (let round = 0; round < 60; round++) {
      const topic = `new-topic-${round}`;
      const results = await Promise.allSettled(replicas.map((b, i) => b.publish(topic, [{ payload: i }])));
      expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([]);
    }
    const names: string[] = [];
    for await (const name of jsm.streams.names())
      if (name.startsWith(`${prefix}_new_topic_`)) names.push(name);
    expect(names.length).toBe(60);
  }, 60_000);

  it('makes a deleted stream anew on the next publish, and consumes from it', async () => {
    const b = await bus();
    await b.publish('jobs', [{ payload: 1 }]);
    await jsm.streams.delete(`${prefix}_jobs`);
    await b.publish('jobs', [{ payload: 2 }]);
    const got: number[] = [];
    const sub = b.consume('jobs', async (m) => {
      got.push(m.payload as number);
      return ack();
    });
    await waitFor(() => got.length === 1, 10_000, 'the message published after the delete');
    await sub.stop();
    expect(got).toEqual([2]);
  });

  it('refuses to publish when another stream takes the topic’s subject, naming it', async () => {
    await jsm.streams.add({ name: `${prefix}_squatter`, subjects: [`${prefix}.jobs`] });
    const b = await bus();
    const error = await b.publish('jobs', [{ payload: 1 }]).then(
      () => new Error('published'),
      (e: unknown) => e as Error,
    );
    expect(error.message).toContain(`another stream than ${prefix}_jobs takes the subjects ${prefix}.jobs`);
  });

  it("updates a topic's consumer when its lease changes between runs", async () => {
    const first = await bus();
    let got = 0;
    const sub = first.consume('jobs', async () => {
      got++;
      return ack();
    });
    await first.publish('jobs', [{ payload: 1 }]);
    await waitFor(() => got === 1);
    await sub.stop();
    expect(await ackWaitMs(`${prefix}_jobs`)).toBe(30_000);

    const next = await bus();
    const again = next.consume('jobs', async () => ack(), { leaseMs: 5000 });
    const until = Date.now() + 5000;
    while ((await ackWaitMs(`${prefix}_jobs`)) !== 5000 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    await again.stop();
    expect(await ackWaitMs(`${prefix}_jobs`)).toBe(5000);
  });
});
