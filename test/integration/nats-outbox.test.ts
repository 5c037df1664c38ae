import { describe, expect, it } from 'bun:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { sql } from 'drizzle-orm';
import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus } from '../../adapters/nats/index.ts';
import { createLogger } from '../../core/log.ts';
import { BusError } from '../../core/ports/event-bus.ts';
import { waitFor } from '../contract/event-bus.contract.ts';
import { outboxFixture } from './outbox-fixture.ts';
import { NATS_URL } from './support.ts';

describe('JetStream bus: the transactional outbox', () => {
  const f = outboxFixture();
  const { outboxRows, drained, collect } = f;
  const bus = (relay = true, relayMinAgeMs?: number) =>
    f.bus(relay, relayMinAgeMs === undefined ? {} : { relayMinAgeMs });

  it('hands rows committed on a replica without a relay to another replica, each message once', async () => {
    const publisher = await bus(false);
    const messages = Array.from({ length: 20 }, (_, i) => ({ id: `m-${i}`, payload: { n: i, tags: ['a'] } }));
    await f.storage.transaction(async (tx) => {
      await tx.query(sql`insert into state (k) values ('one')`);
      await publisher.publish('orders', messages, { tx });
    });
    expect(await outboxRows()).toBe(20);
    await publisher.close();

    const relay = await bus();
    const { seen, sub } = collect(relay, 'orders');
    await waitFor(() => seen.length >= 20, 10_000, 'the relayed messages');
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(seen.sort((a, b) => (a.payload as { n: number }).n - (b.payload as { n: number }).n)).toEqual(
      messages,
    );
    expect(await drained()).toBe(0);
  });

  it('delivers rows once when the publishing bus closes right after commit and another relays them', async () => {
    const publisher = await bus();
    await f.storage.transaction(async (tx) => {
      await publisher.publish(
        'orders',
        [
          { id: 'a', payload: 'A' },
          { id: 'b', payload: 'B' },
        ],
        { tx },
      );
    });
    await publisher.close();
    const other = await bus();
    const { seen, sub } = collect(other, 'orders');
    await waitFor(() => seen.length >= 2, 10_000, 'both messages');
    await new Promise((r) => setTimeout(r, 500));
    await sub.stop();
    expect(seen.map((m) => m.id).sort()).toEqual(['a', 'b']);
    expect(await drained()).toBe(0);
  });

  it("publishes a transaction's messages itself once it commits, without waiting for the relay", async () => {
    // The relay would not take these rows for a minute: only the committing process can move them.
    // It does not consume the topic itself, so they go through JetStream to the bus that does.
    const b = await bus(true, 60_000);
    const { seen, sub } = collect(await bus(false), 'orders');
    const started = Date.now();
    await f.storage.transaction(async (tx) => {
      await tx.query(sql`insert into state (k) values ('eager')`);
      await b.publish(
        'orders',
        [
          { id: 'e1', payload: 1 },
          { id: 'e2', payload: 2 },
        ],
        { tx },
      );
    });
    await waitFor(() => seen.length >= 2, 10_000, 'the committed messages');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(seen.map((m) => m.id).sort()).toEqual(['e1', 'e2']);
  });

  it('leaves a young row to the process that committed it, and moves it once it has aged', async () => {
    const publisher = await bus(false, 1500);
    await f.storage.transaction((tx) => publisher.publish('orders', [{ id: 'left', payload: 'L' }], { tx }));
    const relay = await bus();
    const { seen, sub } = collect(relay, 'orders');
    await new Promise((r) => setTimeout(r, 700));
    expect(seen).toEqual([]);
    expect(await outboxRows()).toBe(1);
    await waitFor(() => seen.length >= 1, 10_000, 'the aged row');
    await sub.stop();
    expect(seen).toEqual([{ id: 'left', payload: 'L' }]);
    expect(await drained()).toBe(0);
  });

  it('leaves no row behind a rolled-back transaction', async () => {
    const b = await bus(false);
    await expect(
      f.storage.transaction(async (tx) => {
        await tx.query(sql`insert into state (k) values ('rolled')`);
        await b.publish('orders', [{ payload: 'never' }], { tx });
        expect(await tx.query(sql`select 1 from bus_outbox`)).toHaveLength(1);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await outboxRows()).toBe(0);
    expect(await f.storage.query(sql`select k from state`)).toEqual([]);
  });

  it('drops the second copy when a relay died between publishing a row and deleting it', async () => {
    const b = await bus(false);
    // What the dead relay left: the message already in JetStream, its row still in the outbox.
    await b.publish('orders', [{ id: 'twice', payload: 1 }]);
    await f.storage.query(
      sql`insert into bus_outbox (topic, msg_id, payload) values ('orders', 'twice', '1')`,
    );
    const relay = await bus();
    const { seen, sub } = collect(relay, 'orders');
    await waitFor(() => seen.length >= 1);
    await drained();
    await new Promise((r) => setTimeout(r, 500));
    await sub.stop();
    expect(seen).toEqual([{ id: 'twice', payload: 1 }]);
    expect(await drained()).toBe(0);
  });

  it('keeps rows while JetStream refuses them and moves them once it accepts', async () => {
    // A stream of the topic's name with the wrong retention: the relay cannot publish to it.
    const nc = await connect({ servers: [NATS_URL] });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: `${f.prefix}_orders`, subjects: [`${f.prefix}.orders`] });
    const b = await bus();
    await f.storage.transaction(async (tx) => {
      await b.publish('orders', [{ id: 'kept', payload: 'kept' }], { tx });
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(await outboxRows()).toBe(1);
    await jsm.streams.delete(`${f.prefix}_orders`);
    await nc.close();
    const { seen: orders, sub: ordersSub } = collect(b, 'orders');
    await waitFor(() => orders.length === 1, 10_000, 'the kept message');
    await ordersSub.stop();
    expect(orders).toEqual([{ id: 'kept', payload: 'kept' }]);
    expect(await drained()).toBe(0);
  });

  it('refuses inside the transaction a message larger than the server accepts', async () => {
    const b = await bus(false);
    const err = await f.storage
      .transaction((tx) => b.publish('orders', [{ id: 'huge', payload: 'x'.repeat(2 ** 21) }], { tx }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('PUBLISH_FAILED');
    expect(await outboxRows()).toBe(0);
  });

  it('says which server it cannot reach', async () => {
    const err = await createJetStreamBus({
      servers: ['nats://user:secret@127.0.0.1:1'],
      streamPrefix: f.prefix,
      storage: f.storage,
      clock: systemClock,
      log: createLogger('silent'),
      timeoutMs: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BusError);
    expect((err as BusError).code).toBe('UNAVAILABLE');
    expect((err as BusError).message).toMatch(/cannot reach NATS at nats:\/\/\*\*\*@127\.0\.0\.1:1/);
  });
});
