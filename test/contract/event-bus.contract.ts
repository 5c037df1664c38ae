import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import type { Clock } from '../../core/ports/clock.ts';
import {
  ack,
  drop,
  type EventBus,
  type JsonValue,
  retry,
  type TopicStats,
} from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';

/** What a bus adapter's test run provides: a bus on a storage, and a way to open a second bus on the same. */
export interface BusHarness {
  bus: EventBus;
  storage: Storage;
  clock: Clock;
  /** Another bus on the same storage and broker: a second replica. */
  another(): Promise<EventBus>;
  /** A topic no other test uses. */
  topic(): string;
  cleanup(): Promise<void>;
}

export const waitFor = async (cond: () => boolean, ms = 10_000, what = 'condition') => {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** The EventBus contract: every adapter passes it unchanged. */
export function eventBusContract(name: string, makeHarness: () => Promise<BusHarness>) {
  describe(`EventBus contract: ${name}`, () => {
    let h: BusHarness;
    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('delivers a published message with its id and payload, once acknowledged never again', async () => {
      const topic = h.topic();
      const seen: Array<{ id: string; payload: JsonValue; attempt: number }> = [];
      await h.bus.publish(topic, [{ id: 'm-1', payload: { hello: 'world', n: 1 } }]);
      const sub = h.bus.consume(topic, async (m) => {
        seen.push({ id: m.id, payload: m.payload, attempt: m.attempt });
        return ack();
      });
      await waitFor(() => seen.length === 1, 10_000, 'first delivery');
      await new Promise((r) => setTimeout(r, 300));
      await sub.stop();
      expect(seen).toEqual([{ id: 'm-1', payload: { hello: 'world', n: 1 }, attempt: 1 }]);
    });

    it('keeps a published message for a consumer that starts later, on another replica', async () => {
      const topic = h.topic();
      await h.bus.publish(topic, [{ payload: 'durable' }]);
      const other = await h.another();
      const seen: JsonValue[] = [];
      const sub = other.consume(topic, async (m) => {
        seen.push(m.payload);
        return ack();
      });
      await waitFor(() => seen.length === 1, 10_000, 'delivery on the other replica');
      await sub.stop();
      await other.close();
      expect(seen).toEqual(['durable']);
    });

    it('retries after the requested delay and counts the attempt', async () => {
      const topic = h.topic();
      const times: number[] = [];
      const attempts: number[] = [];
      const sub = h.bus.consume(topic, async (m) => {
        times.push(h.clock.now());
        attempts.push(m.attempt);
        return m.attempt === 1 ? retry(1500) : ack();
      });
      await h.bus.publish(topic, [{ payload: 'again' }]);
      await waitFor(() => times.length === 2, 15_000, 'retry');
      await sub.stop();
      expect(attempts).toEqual([1, 2]);
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1400);
    });

    it('does not deliver a dropped message again, even after its lease', async () => {
      const topic = h.topic();
      let calls = 0;
      // A short lease: a drop the broker did not take (nats-server 2.9 ignores a TERM with a reason)
      // would come back once it ends.
      const sub = h.bus.consume(
        topic,
        async () => {
          calls++;
          return drop('not wanted');
        },
        { leaseMs: 1000 },
      );
      await h.bus.publish(topic, [{ payload: 1 }]);
      await waitFor(() => calls === 1);
      await new Promise((r) => setTimeout(r, 2500));
      await sub.stop();
      expect(calls).toBe(1);
    });

    it('redelivers a message whose handler threw', async () => {
      const topic = h.topic();
      let calls = 0;
      const sub = h.bus.consume(
        topic,
        async () => {
          calls++;
          if (calls === 1) throw new Error('boom');
          return ack();
        },
        { errorRetryMs: 100 },
      );
      await h.bus.publish(topic, [{ payload: 1 }]);
      await waitFor(() => calls === 2, 10_000, 'redelivery after a throw');
      await sub.stop();
      expect(calls).toBe(2);
    });

    it('publishes with a transaction: nothing on rollback, the message after commit', async () => {
      const topic = h.topic();
      const seen: JsonValue[] = [];
      const sub = h.bus.consume(topic, async (m) => {
        seen.push(m.payload);
        return ack();
      });
      await h.storage.query(sql`create table if not exists bus_contract_state (k text primary key)`);
      const key = `${topic}-k`;
      await expect(
        h.storage.transaction(async (tx) => {
          await tx.query(sql`insert into bus_contract_state (k) values (${`${key}-rolled`})`);
          await h.bus.publish(topic, [{ payload: 'rolled back' }], { tx });
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      await h.storage.transaction(async (tx) => {
        await tx.query(sql`insert into bus_contract_state (k) values (${key})`);
        await h.bus.publish(topic, [{ payload: 'committed' }], { tx });
      });
      await waitFor(() => seen.length === 1, 10_000, 'the committed message');
      await new Promise((r) => setTimeout(r, 500));
      await sub.stop();
      expect(seen).toEqual(['committed']);
      const rows = await h.storage.query<{ k: string }>(
        sql`select k from bus_contract_state where k like ${`${key}%`}`,
      );
      expect(rows.map((r) => r.k)).toEqual([key]);
    });

    it('gives a message back to another consumer when the first holds it past its lease', async () => {
      const topic = h.topic();
      let release: () => void = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      let firstGot = 0;
      const stuck = h.bus.consume(
        topic,
        async () => {
          firstGot++;
          await held;
          return ack();
        },
        // One slot, held: the redelivery can only go to the other consumer, not back to this one.
        { leaseMs: 1000, concurrency: 1 },
      );
      await h.bus.publish(topic, [{ payload: 'leased' }]);
      await waitFor(() => firstGot === 1, 10_000, 'first claim');
      const other = await h.another();
      let secondGot = 0;
      const rescuer = other.consume(
        topic,
        async () => {
          secondGot++;
          return ack();
        },
        { leaseMs: 1000 },
      );
      try {
        await waitFor(() => secondGot === 1, 15_000, 'redelivery after the lease');
      } finally {
        // Never leave the handler hanging: cleanup would wait for it until the hook times out.
        release();
      }
      await rescuer.stop();
      await stuck.stop();
      await other.close();
      expect(secondGot).toBe(1);
    });

    it('handles a burst of messages, each at least once, with parallel handlers', async () => {
      const topic = h.topic();
      const n = 500;
      const seen = new Set<number>();
      let inflight = 0;
      let peak = 0;
      const sub = h.bus.consume(
        topic,
        async (m) => {
          inflight++;
          peak = Math.max(peak, inflight);
          await new Promise((r) => setTimeout(r, 2));
          seen.add(m.payload as number);
          inflight--;
          return ack();
        },
        { concurrency: 16 },
      );
      await Promise.all(Array.from({ length: n }, (_, i) => h.bus.publish(topic, [{ payload: i }])));
      await waitFor(() => seen.size === n, 30_000, `${n} messages`);
      await sub.stop();
      expect(seen.size).toBe(n);
      expect(peak).toBeGreaterThan(1);
      expect(peak).toBeLessThanOrEqual(16);
    });

    it('delivers a message published twice with the same id once', async () => {
      const topic = h.topic();
      await h.bus.publish(topic, [{ id: 'same', payload: 1 }]);
      await h.bus.publish(topic, [{ id: 'same', payload: 1 }]);
      let calls = 0;
      const sub = h.bus.consume(topic, async () => {
        calls++;
        return ack();
      });
      await waitFor(() => calls >= 1);
      await new Promise((r) => setTimeout(r, 700));
      await sub.stop();
      expect(calls).toBe(1);
    });

    it('waits for handlers in flight when a consumer stops', async () => {
      const topic = h.topic();
      let finished = false;
      let started = false;
      const sub = h.bus.consume(topic, async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 300));
        finished = true;
        return ack();
      });
      await h.bus.publish(topic, [{ payload: 1 }]);
      await waitFor(() => started);
      await sub.stop();
      expect(finished).toBe(true);
    });

    /** The topic's stats once `done` holds of them (acks settle in the background), or the last seen. */
    async function statsWhen(topic: string, done: (s: TopicStats | undefined) => boolean) {
      const until = Date.now() + 15_000;
      let stats = (await h.bus.stats()).find((s) => s.topic === topic);
      while (!done(stats) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        stats = (await h.bus.stats()).find((s) => s.topic === topic);
      }
      return stats;
    }

    it('answers the depth and the oldest message of a topic, messages waiting to be retried included', async () => {
      const topic = h.topic();
      await h.bus.publish(topic, [{ payload: 'a' }, { payload: 'b' }, { payload: 'c' }]);
      await h.storage.transaction((tx) => h.bus.publish(topic, [{ payload: 'd' }], { tx }));
      await new Promise((r) => setTimeout(r, 100));
      const waiting = await statsWhen(topic, (s) => s?.depth === 4);
      expect(waiting?.depth).toBe(4);
      expect(waiting!.oldestAgeMs).toBeGreaterThanOrEqual(90);
      expect(waiting!.oldestAgeMs).toBeLessThan(60_000);

      // One acknowledged, three waiting a minute for their retry: pending still, and as old.
      const sub = h.bus.consume(topic, async (m) => (m.payload === 'a' ? ack() : retry(60_000)));
      const retrying = await statsWhen(topic, (s) => s?.depth === 3);
      await sub.stop();
      expect(retrying?.depth).toBe(3);
      expect(retrying!.oldestAgeMs).toBeGreaterThanOrEqual(waiting!.oldestAgeMs);
    });

    it('answers a topic it used and emptied as depth 0, age 0', async () => {
      const topic = h.topic();
      const sub = h.bus.consume(topic, async () => ack());
      await h.bus.publish(topic, [{ payload: 1 }]);
      const stats = await statsWhen(topic, (s) => s?.depth === 0);
      await sub.stop();
      expect(stats).toEqual({ topic, depth: 0, oldestAgeMs: 0 });
    });

    it('refuses a topic name outside the rules', async () => {
      await expect(h.bus.publish('Bad Topic!', [{ payload: 1 }])).rejects.toThrow(/topic/);
    });
  });
}
