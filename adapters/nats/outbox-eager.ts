import type { Logger } from '../../core/log.ts';
import type { JsonValue } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { deleteOutbox } from './statements.ts';
import type { Topology } from './streams.ts';

/** An outbox row just committed by this process. */
export interface CommittedRow {
  seq: number | string;
  topic: string;
  msgId: string;
  payload: JsonValue;
}

/** Publishes committed outbox rows at once; the relay is left what this could not move. */
export interface EagerPublisher {
  /** Publishes the rows of a transaction that has just committed, then deletes them. Never throws. */
  publish(rows: readonly CommittedRow[]): void;
  /** Waits for the publishes and deletes under way. */
  close(): Promise<void>;
}

/**
 * The outbox's fast path: a transaction's rows are published by the process that committed them as soon
 * as it has, and deleted once JetStream has them (the deletes of a moment share one statement). The
 * relay (outbox-relay.ts) is then only the way back for what this did not finish: a replica killed
 * between commit and delete, JetStream refusing a publish, a failed delete. It leaves rows younger than
 * its grace to this path; should both publish a row, the Nats-Msg-Id makes JetStream keep one.
 *
 * Why: through the relay, every committed batch waited for the relay's turn and cost a transaction of
 * its own (begin, claim, delete, commit) besides the publish.
 */
export function createEagerPublisher(o: {
  storage: Storage;
  topology: Topology;
  log: Logger;
}): EagerPublisher {
  const log = o.log.child({ component: 'jetstream-outbox' });
  const work = new Set<Promise<void>>();
  let doomed: Array<number | string> = [];
  let deleting: Promise<void> | null = null;

  // The deletes of rows published at about the same time go out as one statement.
  async function deleteDoomed(): Promise<void> {
    while (doomed.length > 0) {
      const seqs = doomed;
      doomed = [];
      try {
        await deleteOutbox(o.storage.db, seqs);
      } catch (err) {
        // JetStream has them: the relay takes the rows later and JetStream drops its copies.
        log.warn('deleting published outbox rows failed; the relay will clear them', {
          err,
          rows: seqs.length,
        });
      }
    }
    deleting = null;
  }

  async function move(rows: readonly CommittedRow[]): Promise<void> {
    const results = await Promise.allSettled(
      rows.map((r) => o.topology.publish(r.topic, r.msgId, r.payload)),
    );
    const failed = results.filter((r) => r.status === 'rejected').length;
    for (const [i, r] of results.entries()) if (r.status === 'fulfilled') doomed.push(rows[i]!.seq);
    if (doomed.length > 0)
      deleting ??= new Promise<void>((resolve) => setImmediate(resolve)).then(deleteDoomed);
    if (failed > 0) {
      const reason = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
      log.warn('publishing committed outbox rows failed; the relay will move them', {
        err: reason,
        rows: failed,
      });
    }
    await deleting;
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
      await deleting;
    },
  };
}
