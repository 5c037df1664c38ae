import type { Logger } from '../../core/log.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { deleteOutbox } from './statements.ts';

/** Deletes settled outbox rows, those of a moment in one statement. */
export interface OutboxDeletes {
  /** Deletes the row soon; resolves once its statement is done (never rejects). */
  delete(seq: number | string): Promise<void>;
  /** Waits for the deletes under way. */
  settled(): Promise<void>;
}

/**
 * A failed delete leaves its rows to the relay once they are due: JetStream then drops a copy it has
 * already stored (same Nats-Msg-Id), and a message a consumer of this process handled comes once more.
 */
export function createOutboxDeletes(storage: Storage, log: Logger): OutboxDeletes {
  let doomed: Array<number | string> = [];
  let deleting: Promise<void> | null = null;

  async function deleteDoomed(): Promise<void> {
    while (doomed.length > 0) {
      const seqs = doomed;
      doomed = [];
      try {
        await deleteOutbox(storage.db, seqs);
      } catch (err) {
        log.warn('deleting settled outbox rows failed; the relay will move them once due', {
          err,
          rows: seqs.length,
        });
      }
    }
    deleting = null;
  }

  return {
    delete(seq) {
      doomed.push(seq);
      deleting ??= new Promise<void>((resolve) => setImmediate(resolve)).then(deleteDoomed);
      return deleting;
    },
    async settled() {
      while (deleting) await deleting;
    },
  };
}
