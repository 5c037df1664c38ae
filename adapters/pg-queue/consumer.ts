import type { Logger } from '../../core/log.ts';
import { type Clock, realMs } from '../../core/ports/clock.ts';
import type { ConsumeOptions, Handler, Outcome, Subscription } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { yieldToEventLoop } from '../../core/runtime.ts';
import {
  type ClaimedRow,
  claimMessages,
  deleteMessages,
  nextDueAt,
  rescheduleMessages,
} from './statements.ts';
import type { Wakeups } from './wakeups.ts';

interface ConsumerOptions<T> extends ConsumeOptions {
  storage: Storage;
  clock: Clock;
  log: Logger;
  topic: string;
  channel: string;
  handler: Handler<T>;
  wakeups: Wakeups;
  pollMs: number;
}

type Settlement = { seq: number; token: string; outcome: Outcome };

/** One consumer loop: claim up to the free concurrency, run handlers, settle their outcomes in batches. */
export function runConsumer<T>(o: ConsumerOptions<T>): Subscription {
  const concurrency = o.concurrency ?? 32;
  const refill = Math.max(1, Math.floor(concurrency / 4));
  const leaseMs = o.leaseMs ?? 30_000;
  const errorRetryMs = o.errorRetryMs ?? 1000;
  const log = o.log.child({ component: 'pg-queue', topic: o.topic });
  let running = true;
  let inflight = 0;
  let settling: Promise<void> | null = null;
  let toSettle: Settlement[] = [];
  const handlers = new Set<Promise<void>>();
  let unlisten: (() => Promise<void>) | undefined;
  let slot: (() => void) | undefined;

  async function claim(n: number): Promise<{ rows: ClaimedRow[]; token: string }> {
    const token = crypto.randomUUID();
    const now = o.clock.now();
    const rows = await claimMessages(o.storage.db, o.topic, now, n, now + leaseMs, token);
    rows.sort((a, b) => Number(a.seq) - Number(b.seq));
    return { rows, token };
  }

  /** Milliseconds (on the clock) until the earliest message of the topic becomes claimable. */
  async function nextDue(): Promise<number | null> {
    const at = await nextDueAt(o.storage.db, o.topic);
    return at === null ? null : at - o.clock.now();
  }

  async function settle(): Promise<void> {
    while (toSettle.length) {
      const batch = toSettle;
      toSettle = [];
      const acks = batch.filter((s) => s.outcome.kind !== 'retry');
      const retries = batch.filter((s) => s.outcome.kind === 'retry');
      try {
        if (acks.length)
          await deleteMessages(
            o.storage.db,
            acks.map((s) => s.seq),
          );
        if (retries.length) {
          const now = o.clock.now();
          await rescheduleMessages(
            o.storage.db,
            retries.map((s) => ({
              seq: s.seq,
              token: s.token,
              at: now + (s.outcome as { delayMs: number }).delayMs,
            })),
          );
          // The loop may be idling past the new due time: let it look again.
          o.wakeups.wake(o.topic);
        }
      } catch (err) {
        // Unsettled messages come back after their lease: at least once, never lost.
        log.error('settling messages failed; they will be redelivered after the lease', {
          err,
          count: batch.length,
        });
      }
    }
    settling = null;
  }

  function finish(s: Settlement) {
    if (s.outcome.kind === 'drop') log.warn('message dropped', { seq: s.seq, reason: s.outcome.reason });
    toSettle.push(s);
    settling ??= Promise.resolve().then(settle);
  }

  function run(row: ClaimedRow, token: string) {
    inflight++;
    const p = (async () => {
      let outcome: Outcome;
      try {
        outcome = await o.handler({
          id: row.msg_id,
          topic: o.topic,
          payload: row.payload as T,
          attempt: row.attempts,
        });
      } catch (err) {
        log.error('handler failed; retrying', { err, msg_id: row.msg_id });
        outcome = { kind: 'retry', delayMs: errorRetryMs };
      }
      finish({ seq: Number(row.seq), token, outcome });
    })().finally(() => {
      inflight--;
      handlers.delete(p);
      slot?.();
    });
    handlers.add(p);
  }

  // Idle until a publish wakes the topic, a handler frees a slot, or the poll interval passes.
  const idle = async (ms: number) => {
    const w = o.wakeups.wait(o.topic, ms);
    slot = w.cancel;
    await w.done;
    slot = undefined;
  };

  const loop = (async () => {
    try {
      unlisten = await o.storage.listen(o.channel, () => o.wakeups.wake(o.topic));
    } catch (err) {
      log.warn('LISTEN unavailable; polling only', { err });
    }
    while (running) {
      try {
        const free = concurrency - inflight;
        // Busy: claim again once a quarter of the slots is free, not slot by slot. Each claim is a
        // statement whatever its size, and one per freed slot made claims of one or two messages.
        if (free <= 0 || (free < refill && inflight > 0)) {
          await idle(o.pollMs);
          continue;
        }
        const { rows, token } = await claim(free);
        for (const row of rows) run(row, token);
        if (rows.length > 0) {
          // With a backlog this loop could run on microtasks alone (PGlite); give I/O its turn.
          await yieldToEventLoop();
          continue;
        }
        const due = await nextDue();
        const wait = due === null ? o.pollMs : Math.min(o.pollMs, realMs(o.clock, due));
        if (running) await idle(Math.max(1, wait));
      } catch (err) {
        if (!running) break;
        log.error('claiming messages failed; backing off', { err });
        await idle(o.pollMs);
      }
    }
  })();

  return {
    async stop() {
      if (!running) return;
      running = false;
      o.wakeups.wake(o.topic);
      slot?.();
      await loop;
      await Promise.all(handlers);
      if (settling) await settling;
      await unlisten?.().catch(() => {});
    },
  };
}
