import type { Logger } from '../../core/log.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { claimOutbox, deleteOutbox } from './statements.ts';
import type { Topology } from './streams.ts';
import { backoffMs, pause } from './timing.ts';

export interface RelayOptions {
  storage: Storage;
  topology: Topology;
  log: Logger;
  /** How often to look for rows left behind. */
  pollMs: number;
  /** Rows moved per transaction. */
  batchSize: number;
  /** Longest wait between attempts while JetStream fails. */
  maxBackoffMs: number;
}

/** The transactional outbox relay of one process. */
export interface OutboxRelay {
  /** Stops after the batch in progress (its rows are moved or stay, never half). */
  stop(): Promise<void>;
}

/** Postgres says `undefined_table` somewhere in the error's cause chain. */
function isMissingTable(err: unknown): boolean {
  for (let e = err; e instanceof Object; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === '42P01') return true;
  return false;
}

/**
 * Moves committed `bus_outbox` rows to JetStream that the process which committed them did not (see
 * outbox-eager.ts and outbox-local.ts): rows whose `due_at` has passed. A row is written due a moment
 * after its transaction began (a consumer's lease when a consumer of that process may take it), and a
 * retry postpones it by its delay. Each batch is claimed with FOR UPDATE SKIP LOCKED, so
 * the relays of every replica share the table without taking a row twice; rows are deleted in the
 * same transaction once JetStream has them. A relay that dies between publishing and deleting leaves
 * its rows to another, whose publish JetStream drops as a duplicate of the same Nats-Msg-Id.
 */
export function startOutboxRelay(o: RelayOptions): OutboxRelay {
  const log = o.log.child({ component: 'jetstream-outbox' });
  const stopping = new AbortController();
  let running = true;

  /** One batch: returns how many rows were claimed; throws, after committing the moved ones, if some failed. */
  async function relayBatch(): Promise<number> {
    const { claimed, failure } = await o.storage.transaction(async (tx) => {
      const rows = await claimOutbox(tx.db, o.batchSize);
      if (rows.length === 0) return { claimed: 0, failure: undefined };
      const results = await Promise.allSettled(
        rows.map((r) => o.topology.publish(r.topic, r.msg_id, r.payload, r.attempts)),
      );
      const moved = rows.filter((_, i) => results[i]!.status === 'fulfilled');
      if (moved.length > 0)
        await deleteOutbox(
          tx.db,
          moved.map((r) => r.seq),
        );
      const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      return {
        claimed: rows.length,
        failure: rejected && { reason: rejected.reason, left: rows.length - moved.length },
      };
    });
    if (failure)
      throw new Error(`${failure.left} outbox rows not published: ${(failure.reason as Error)?.message}`, {
        cause: failure.reason,
      });
    return claimed;
  }

  const loop = (async () => {
    let failures = 0;
    while (running) {
      try {
        const claimed = await relayBatch();
        failures = 0;
        // A full batch means more may be waiting: go on at once.
        if (claimed < o.batchSize) await pause(o.pollMs, stopping.signal);
      } catch (err) {
        if (!running) break;
        if (isMissingTable(err)) {
          // The service builds the bus before it applies migrations: wait for them quietly.
          await pause(o.pollMs, stopping.signal);
          continue;
        }
        const ms = backoffMs(failures++, o.pollMs, o.maxBackoffMs);
        log.error('relaying the outbox failed; the rows stay and are retried', { err, retry_in_ms: ms });
        await pause(ms, stopping.signal);
      }
    }
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      stopping.abort();
      await loop;
    },
  };
}
