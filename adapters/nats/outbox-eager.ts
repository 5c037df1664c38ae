import type { Logger } from '../../core/log.ts';
import type { JsonValue } from '../../core/ports/event-bus.ts';
import type { OutboxDeletes } from './outbox-deletes.ts';
import type { Topology } from './streams.ts';

/** An outbox row just committed by this process. */
export interface CommittedRow {
  seq: number | string;
  topic: string;
  msgId: string;
  payload: JsonValue;
  /**
   * For a row a consumer of this process may take (outbox-local.ts): the lease it was held for, and
   * when it falls due (epoch milliseconds).
   */
  held?: { leaseMs: number; dueMs: number };
}

/** Publishes committed outbox rows at once; the relay is left what this could not move. */
export interface EagerPublisher {
  /** Publishes the rows of a transaction that has just committed, then deletes them. Never throws. */
  publish(rows: readonly CommittedRow[]): void;
  /** Waits for the publishes and deletes under way. */
  close(): Promise<void>;
}

/**
 * The outbox's fast path to JetStream: a transaction's rows that no consumer of this process took
 * (outbox-local.ts) are published by the process that committed them as soon as it has, and deleted
 * once JetStream has them (the deletes of a moment share one statement). The relay (outbox-relay.ts)
 * is then only the way back for what this did not finish: a replica killed between commit and delete,
 * JetStream refusing a publish, a failed delete. Should both publish a row, the Nats-Msg-Id makes
 * JetStream keep one.
 *
 * Why: through the relay, every committed batch waited for the relay's turn and cost a transaction of
 * its own (begin, claim, delete, commit) besides the publish.
 */
export function createEagerPublisher(o: {
  topology: Topology;
  deletes: OutboxDeletes;
  log: Logger;
}): EagerPublisher {
  const log = o.log.child({ component: 'jetstream-outbox' });
  const work = new Set<Promise<void>>();

  async function move(rows: readonly CommittedRow[]): Promise<void> {
    const results = await Promise.allSettled(
      rows.map((r) => o.topology.publish(r.topic, r.msgId, r.payload)),
    );
    const deleted: Array<Promise<void>> = [];
    for (const [i, r] of results.entries())
      if (r.status === 'fulfilled') deleted.push(o.deletes.delete(rows[i]!.seq));
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (rejected.length > 0)
      log.warn('publishing committed outbox rows failed; the relay will move them', {
        err: rejected[0]!.reason,
        rows: rejected.length,
      });
    await Promise.all(deleted);
  }

  return {
    publish(rows) {
      if (rows.length === 0) return;
      const p = move(rows)
        .catch((err: unknown) => log.error('moving committed outbox rows failed', { err }))
        .finally(() => work.delete(p));
      work.add(p);
    },
    async close() {
      await Promise.all(work);
      await o.deletes.settled();
    },
  };
}
