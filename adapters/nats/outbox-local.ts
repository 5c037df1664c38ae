import type { Logger } from '../../core/log.ts';
import { type Clock, realMs } from '../../core/ports/clock.ts';
import type { Outcome } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import type { LocalConsumer } from './consumer.ts';
import type { OutboxDeletes } from './outbox-deletes.ts';
import type { CommittedRow } from './outbox-eager.ts';
import { postponeOutbox } from './statements.ts';

/** Consumers of this process that take the messages its transactions commit, without JetStream. */
export interface LocalHandOff {
  /** Lets a consumer of this process take its topic's committed rows; the returned function stops it. */
  add(topic: string, consumer: LocalConsumer): () => void;
  /**
   * How a row of this topic written now is held for a consumer here, or undefined when there is none
   * (the row goes to JetStream): two of the longest lease (real milliseconds) of the topic's consumers
   * here, one to wait for a slot and one to handle it, and counted as attempted once, should a relay
   * move it after a crash.
   */
  hold(topic: string): { leaseMs: number; holdMs: number; attempts: number } | undefined;
  /** Hands committed rows written held to a consumer of this process; answers those none took. */
  take(rows: readonly CommittedRow[]): CommittedRow[];
  /** Waits for the deletes and postponements under way (the consumers wait for their handlers). */
  close(): Promise<void>;
}

/**
 * The shortest way for a message a transaction publishes to a topic this process also consumes: once
 * the transaction commits, one of its consumers here handles the message straight from memory, and its
 * outbox row stays the durable copy until the outcome is known. The row was written due two leases
 * after the transaction began (counted as attempted once), and a handler starts only while a whole
 * lease is left, so no relay moves a row being handled; a process killed in between leaves it to fall
 * due, and the relay of any replica then publishes it to JetStream (attempt 2), as JetStream redelivers
 * a message whose ack wait ran out.
 *
 * - ack or drop: the row is deleted (with the other rows of that moment);
 * - retry after a delay: the row is postponed by the delay, and the relay publishes it to JetStream
 *   when due, where any replica's consumer takes it (attempt 2 and on);
 * - no consumer here, or a consumer with too many waiting already (4 × its concurrency): the row goes
 *   to JetStream at once (outbox-eager.ts), as does one still waiting for a slot when only a lease is
 *   left, or when its consumer stops (or, where this process does not relay, it waits to fall due).
 *
 * Why: with one webhook, each delivery's message otherwise crosses NATS twice (publish, then pull and
 * ack) to come back to the process that wrote it.
 */
export function createLocalHandOff(o: {
  storage: Storage;
  clock: Clock;
  deletes: OutboxDeletes;
  /** Where rows go that a consumer took and gave back unhandled (to JetStream, when this process relays). */
  spill: (rows: readonly CommittedRow[]) => void;
  log: Logger;
}): LocalHandOff {
  const log = o.log.child({ component: 'jetstream-outbox' });
  const consumers = new Map<string, Set<LocalConsumer>>();
  const postponing = new Set<Promise<void>>();

  function settle(row: CommittedRow, outcome: Outcome): void {
    if (outcome.kind !== 'retry') {
      if (outcome.kind === 'drop') log.warn('message dropped', { msg_id: row.msgId, reason: outcome.reason });
      void o.deletes.delete(row.seq);
      return;
    }
    const p = postponeOutbox(o.storage.db, row.seq, realMs(o.clock, outcome.delayMs))
      .then(() => undefined)
      .catch((err: unknown) =>
        // The row stays due at the end of its lease: it is retried then.
        log.warn('postponing a message to retry failed; it comes back after its lease', {
          err,
          msg_id: row.msgId,
        }),
      )
      .finally(() => postponing.delete(p));
    postponing.add(p);
  }

  return {
    add(topic, consumer) {
      const set = consumers.get(topic) ?? new Set<LocalConsumer>();
      consumers.set(topic, set);
      set.add(consumer);
      return () => {
        set.delete(consumer);
        if (set.size === 0 && consumers.get(topic) === set) consumers.delete(topic);
      };
    },
    hold(topic) {
      const set = consumers.get(topic);
      if (!set) return undefined;
      let leaseMs = 0;
      for (const c of set) leaseMs = Math.max(leaseMs, c.leaseRealMs);
      return { leaseMs, holdMs: 2 * leaseMs, attempts: 1 };
    },
    take(rows) {
      const left: CommittedRow[] = [];
      for (const row of rows) {
        const set = row.held ? consumers.get(row.topic) : undefined;
        // A handler starts a whole lease before the row falls due, less a tenth for clocks apart.
        const startBy = row.held ? row.held.dueMs - row.held.leaseMs * 1.1 : 0;
        const msg = { id: row.msgId, topic: row.topic, payload: row.payload, attempt: 1 };
        const settled = (outcome: Outcome) => settle(row, outcome);
        const declined = () => o.spill([row]);
        const taken = set && [...set].some((c) => c.offer(msg, startBy, settled, declined));
        if (!taken) left.push(row);
      }
      return left;
    },
    async close() {
      while (postponing.size > 0) await Promise.all(postponing);
      await o.deletes.settled();
    },
  };
}
