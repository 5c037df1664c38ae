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

    // What a process killed -9 mid-handler leaves: its row, attempted once, due when its hold ends.
    await f.storage.query(
      sql`insert into bus_outbox (topic, msg_id, payload, due_at, attempts)
          values ('orders', 'held', '"H"', now() + interval '1500 milliseconds', 1)`,
    );
    const seen: string[] = [];
    const other = relaying.consume('orders', async (m: Delivered) => {
      seen.push(`${m.id}#${m.attempt} ${JSON.stringify(m.payload)}`);
      return ack();
    });
    await new Promise((r) => setTimeout(r, 700));
    expect(seen).toEqual([]);
    await waitFor(() => seen.length === 1, 10_000, 'the other replica to get it once due');
    expect(await f.drained()).toBe(0);
    await other.stop();
    expect(seen).toEqual(['held#2 "H"']);
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

  it('waiting for a slot go through JetStream when only a lease is left, or when the consumer stops', async () => {
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
    // 'first' holds the one slot; 'waited' (held two leases, 6 s) gives up its place when only a lease
    // and a tenth are left, after 2.7 s, and goes through JetStream to whichever consumer pulls it
    // (should this one, it waits again, half its ack wait at most, and is handed back).
    await publishIn(b, ['first', 'waited']);
    await waitFor(() => handled.length === 1, 10_000, 'the message that waited');
    expect(handled[0]!.id).toBe('waited');
    expect(handled[0]!.at).toBeGreaterThanOrEqual(2600);
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

  it('never run more handlers than the concurrency, pulled messages waiting their turn first', async () => {
    const b = await f.bus();
    const busy = gate();
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        most = Math.max(most, ++running);
        await busy.opened;
        order.push(m.id);
        running--;
        return ack();
      },
      { concurrency: 2 },
    );
    // The idle consumer has asked JetStream for two; two of these run here, one waits.
    await publishIn(b, ['l1', 'l2', 'l3']);
    // Straight to JetStream: they come on the open pull and wait for a slot too.
    await b.publish('orders', [
      { id: 'j1', payload: 1 },
      { id: 'j2', payload: 2 },
    ]);
    await new Promise((r) => setTimeout(r, 500));
    expect(running).toBe(2);
    busy.open();
    await waitFor(() => order.length >= 5, 10_000, 'all five');
    expect(await f.drained()).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    await sub.stop();
    expect(most).toBe(2);
    expect(order.sort()).toEqual(['j1', 'j2', 'l1', 'l2', 'l3']);
  });

  it('hand back a pulled message that waited half its ack wait, handled once', async () => {
    const b = await f.bus();
    const seen: string[] = [];
    const sub = b.consume(
      'orders',
      async (m: Delivered) => {
        seen.push(`${m.id}#${m.attempt}`);
        if (m.id === 'slow') await new Promise((r) => setTimeout(r, 1600));
        return ack();
      },
      { concurrency: 1, leaseMs: 1000 },
    );
    // 'slow' runs here for 1.6 s, within its row's two leases; 'pulled' comes on the open pull, waits
    // half its ack wait of 1 s, is handed back and comes again once the slot is free. The pull must be
    // open before 'slow' takes the one slot: a loop that starts after it asks for nothing until it ends.
    await f.pullOpen('orders');
    await publishIn(b, ['slow']);
    await b.publish('orders', [{ id: 'pulled', payload: 1 }]);
    await waitFor(() => seen.some((s) => s.startsWith('pulled')), 10_000, 'the pulled message');
    await new Promise((r) => setTimeout(r, 1500));
    await sub.stop();
    expect(seen).toEqual(['slow#1', 'pulled#2']);
  });
});
