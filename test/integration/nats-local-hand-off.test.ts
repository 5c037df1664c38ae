import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { ack, type Delivered, drop, type Outcome, retry } from '../../core/ports/event-bus.ts';
import { waitFor } from '../contract/event-bus.contract.ts';
import { outboxFixture } from './outbox-fixture.ts';

/** A promise and the function that settles it. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describe('JetStream bus: messages committed to a topic this process consumes', () => {
  const f = outboxFixture();
  const publishIn = (b: Awaited<ReturnType<typeof f.bus>>, ids: string[]) =>
    f.storage.transaction((tx) =>
      b.publish(
        'orders',
        ids.map((id) => ({ id, payload: { id } })),
        { tx },
      ),
    );

  it('are handled by its consumer after commit, never stored in JetStream, and their rows deleted', async () => {
    const b = await f.bus();
    const { seen, sub } = f.collect(b, 'orders');
    await publishIn(b, ['a', 'b', 'c']);
    await waitFor(() => seen.length >= 3, 5000, 'the three messages');
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(seen.map((m) => m.id).sort()).toEqual(['a', 'b', 'c']);
    expect(await f.storedInJetStream('orders')).toBe(0);
  });

  it('come back through JetStream after a retry delay, counted as attempt 2', async () => {
    const b = await f.bus();
    const attempts: Array<{ attempt: number; at: number }> = [];
    const started = Date.now();
    const sub = b.consume('orders', async (m: Delivered): Promise<Outcome> => {
      attempts.push({ attempt: m.attempt, at: Date.now() - started });
      return m.attempt === 1 ? retry(400) : ack();
    });
    await publishIn(b, ['r']);
    await waitFor(() => attempts.length >= 2, 10_000, 'the retry');
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(400);
    expect(await f.storedInJetStream('orders')).toBe(1);
  });

  it('are retried when the handler throws, and not again once dropped', async () => {
    const b = await f.bus();
    const calls: string[] = [];
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        calls.push(`${m.id}#${m.attempt}`);
        if (m.id === 'dropped') return drop('not wanted');
        if (m.attempt === 1) throw new Error('boom');
        return ack();
      },
      { errorRetryMs: 100 },
    );
    await publishIn(b, ['thrown', 'dropped']);
    await waitFor(() => calls.length >= 3, 10_000, 'the retry of the thrown one');
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 500));
    await sub.stop();
    expect(calls.sort()).toEqual(['dropped#1', 'thrown#1', 'thrown#2']);
  });

  it('are left to the relay while held, and a row a dead process held goes to another replica', async () => {
    // A slow handler here: another replica's relay runs meanwhile and leaves the row alone.
    const b = await f.bus();
    const relaying = await f.bus();
    const handled: string[] = [];
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        await new Promise((r) => setTimeout(r, 800));
        handled.push(m.id);
        return ack();
      },
      { leaseMs: 5000 },
    );
    await publishIn(b, ['slow']);
    await waitFor(() => handled.length === 1, 5000, 'the slow message');
    expect(await f.drained()).toBe(0);
    await sub.stop();
    expect(await f.storedInJetStream('orders')).toBe(0);

    // What a process killed -9 mid-handler leaves: its row, due when the consumer's lease ends.
    await f.storage.query(
      sql`insert into bus_outbox (topic, msg_id, payload, due_at)
          values ('orders', 'held', '"H"', now() + interval '1500 milliseconds')`,
    );
    const { seen, sub: other } = f.collect(relaying, 'orders');
    await new Promise((r) => setTimeout(r, 700));
    expect(seen).toEqual([]);
    await waitFor(() => seen.length === 1, 10_000, 'the other replica to get it after the lease');
    expect(await f.drained()).toBe(0);
    await other.stop();
    expect(seen).toEqual([{ id: 'held', payload: 'H' }]);
    expect(handled).toEqual(['slow']);
  });

  it('go through JetStream, each handled once, when the consumer here is full', async () => {
    const b = await f.bus();
    const busy = gate();
    const handled: string[] = [];
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        await busy.opened;
        handled.push(m.id);
        return ack();
      },
      { concurrency: 1 },
    );
    const ids = Array.from({ length: 8 }, (_, i) => `m${i}`);
    await publishIn(b, ids);
    // One runs, four (4 × concurrency) wait for its slot here, three go to JetStream.
    const until = Date.now() + 5000;
    while ((await f.storedInJetStream('orders')) < 3 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
    expect(await f.storedInJetStream('orders')).toBe(3);
    busy.open();
    await waitFor(() => handled.length >= 8, 10_000, 'all eight');
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(handled.sort()).toEqual(ids);
  });

  it('waiting for a slot go through JetStream after half a lease, or when the consumer stops', async () => {
    const b = await f.bus();
    const busy = gate();
    const handled: Array<{ id: string; by: string; at: number }> = [];
    const started = Date.now();
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        if (m.id === 'first') await busy.opened;
        handled.push({ id: m.id, by: 'here', at: Date.now() - started });
        return ack();
      },
      { concurrency: 1, leaseMs: 3000 },
    );
    const other = await f.bus(false);
    other.consume('orders', async (m: Delivered) => {
      handled.push({ id: m.id, by: 'other', at: Date.now() - started });
      return ack();
    });
    // 'first' holds the one slot; 'waited' gives up its place after 1.5 s, half its lease, and goes
    // through JetStream, to whichever consumer pulls it.
    await publishIn(b, ['first', 'waited']);
    await waitFor(() => handled.length === 1, 5000, 'the message that waited half a lease');
    expect(handled[0]!.id).toBe('waited');
    expect(handled[0]!.at).toBeGreaterThanOrEqual(1400);
    // Waiting when the consumer stops: it goes to the other replica.
    await publishIn(b, ['queued']);
    const stopped = sub.stop();
    await waitFor(() => handled.length === 2, 5000, 'the message waiting when the consumer stopped');
    expect(handled[1]).toMatchObject({ id: 'queued', by: 'other' });
    busy.open();
    await stopped;
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(handled.map((h) => `${h.id} ${h.by}`).sort()).toEqual([
      'first here',
      'queued other',
      `waited ${handled[0]!.by}`,
    ]);
  });
});
