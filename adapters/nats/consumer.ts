import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../core/log.ts';
import { type Clock, realMs } from '../../core/ports/clock.ts';
import type {
  ConsumeOptions,
  Delivered,
  Handler,
  JsonValue,
  Outcome,
  Subscription,
} from '../../core/ports/event-bus.ts';
import { ATTEMPTS_HEADER, type Topology } from './streams.ts';
import { backoffMs, pause, Signal } from './timing.ts';

interface ConsumerOptions<T> extends ConsumeOptions {
  topology: Topology;
  clock: Clock;
  log: Logger;
  topic: string;
  handler: Handler<T>;
  /** How long one pull request waits on the server for messages. */
  fetchExpiresMs: number;
  /** Sends what the connection has buffered (the acks) to the server. */
  flush: () => Promise<void>;
}

/** A consumer of this process, which may also take messages its process committed (outbox-local.ts). */
export interface LocalConsumer extends Subscription {
  /** The lease its messages have, in real milliseconds. */
  readonly leaseRealMs: number;
  /**
   * Takes a message that never went to JetStream, to run the handler on it in a slot (at once, or when
   * one frees, but not from `startBy` on, a real-time instant); `settled` gets the outcome (a throw is
   * a retry after `errorRetryMs`). False: not taken, as the consumer is stopped, `startBy` has passed
   * or `4 × concurrency` wait already. A taken message still waiting at `startBy`, or when the consumer
   * stops, goes back through `declined`.
   */
  offer(
    msg: Delivered<JsonValue>,
    startBy: number,
    settled: (outcome: Outcome) => void,
    declined: () => void,
  ): boolean;
}

interface Waiting {
  msg: Delivered<JsonValue>;
  startBy: number;
  settled: (outcome: Outcome) => void;
  declined: () => void;
}

/** A pulled message that found no free slot, and since when it waits. */
interface Pulled {
  m: JsMsg;
  since: number;
}

/**
 * One consumer loop on the topic's durable pull consumer. At most `concurrency` handlers run. Handlers
 * running plus messages asked for stay within `concurrency` too, except while messages of this
 * process (`offer`) wait: then JetStream's messages still get up to a quarter of the slots (handlers
 * on them, messages asked for and waiting), so that they are not starved. A pulled message that finds no free slot waits, first in line, and its ack wait begins
 * again (`working`) when it starts, so that each handler has a whole lease; one that waited half its
 * ack wait is handed back (`nak`) for any consumer to take, counted as delivered once more.
 */
export function runConsumer<T>(o: ConsumerOptions<T>): LocalConsumer {
  const concurrency = Math.max(1, o.concurrency ?? 32);
  const leaseMs = o.leaseMs ?? 30_000;
  const errorRetryMs = o.errorRetryMs ?? 1000;
  const log = o.log.child({ component: 'jetstream', topic: o.topic });
  const stopping = new AbortController();
  /** Woken when a handler ends or a pull request ends: slots or credits may be free again. */
  const changed = new Signal();
  const handlers = new Set<Promise<void>>();
  const pulls = new Set<Promise<void>>();
  const batches = new Set<ConsumerMessages>();
  let running = true;
  let inflight = 0;
  /** Messages asked of the server in open pull requests and not yet received. */
  let outstanding = 0;
  let failure: unknown;
  /** Failed pulls in a row: how long to back off. */
  let failures = 0;

  /**
   * Settlements wait for the end of the event loop's turn and go out together: each is a publish to the
   * server, and the client writes what a turn buffered in one system call, where one a handler (each
   * ending in its own I/O callback) made one each.
   */
  let pending: Array<() => void> = [];
  const flushSettled = () => {
    const now = pending;
    pending = [];
    for (const send of now) send();
  };
  function settle(m: JsMsg, id: string, outcome: Outcome): void {
    if (pending.push(() => send(m, id, outcome)) === 1) setImmediate(flushSettled);
  }

  function send(m: JsMsg, id: string, outcome: Outcome): void {
    try {
      if (outcome.kind === 'ack') m.ack();
      else if (outcome.kind === 'retry') {
        const delay = realMs(o.clock, outcome.delayMs);
        if (delay > 0) m.nak(delay);
        else m.nak();
      } else {
        // The reason goes to the log, not to the server: nats-server before 2.10.4 takes `+TERM <reason>`
        // for no acknowledgement at all and redelivers the message once its ack wait ends.
        log.warn('message dropped', { msg_id: id, reason: outcome.reason });
        m.term();
      }
    } catch (err) {
      // The connection is gone: the server redelivers the message once its ack wait ends.
      log.error('settling a message failed; it comes back after its lease', { err, msg_id: id });
    }
  }

  async function outcomeOf(msg: Delivered<T>): Promise<Outcome> {
    try {
      return await o.handler(msg);
    } catch (err) {
      log.error('handler failed; retrying', { err, msg_id: msg.id, attempt: msg.attempt });
      return { kind: 'retry', delayMs: errorRetryMs };
    }
  }

  async function handle(m: JsMsg): Promise<void> {
    const id = m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
    let payload: JsonValue;
    try {
      payload = m.json<JsonValue>();
    } catch (err) {
      return settle(m, id, { kind: 'drop', reason: `payload is not JSON: ${(err as Error).message}` });
    }
    // Attempts made in the committing process, before the message reached JetStream, count too.
    const before = Number(m.headers?.get(ATTEMPTS_HEADER)) || 0;
    const attempt = before + m.info.deliveryCount;
    settle(m, id, await outcomeOf({ id, topic: o.topic, payload: payload as T, attempt }));
  }

  /** Handlers running on messages pulled from JetStream (the rest are this process's own). */
  let pulledInflight = 0;

  function run(m: JsMsg): void {
    pulledInflight++;
    track(handle(m).finally(() => pulledInflight--));
  }

  function track(work: Promise<void>): void {
    inflight++;
    const p = work.finally(() => {
      inflight--;
      handlers.delete(p);
      dispatch();
      changed.wake();
    });
    handlers.add(p);
  }

  const leaseRealMs = realMs(o.clock, leaseMs);
  /** Pulled messages that found every slot taken: they start first. */
  const pulled: Pulled[] = [];
  /** Messages of this process waiting for a slot (`offer`). */
  const waiting: Waiting[] = [];
  let sweeper: ReturnType<typeof setTimeout> | undefined;

  function runLocal(w: Waiting): void {
    track(
      outcomeOf(w.msg as Delivered<T>)
        .then(w.settled)
        .catch((err: unknown) => log.error('settling a message failed', { err, msg_id: w.msg.id })),
    );
  }

  // With the connection gone, the server redelivers the message once its ack wait ends.
  function renew(m: JsMsg): void {
    try {
      m.working();
    } catch {}
  }
  function handBack(m: JsMsg): void {
    try {
      m.nak();
    } catch {}
  }

  /**
   * Starts waiting messages while slots are free, pulled ones first; hands back pulled ones waiting
   * half their ack wait; gives back messages of this process that may no longer start (`startBy`).
   */
  function dispatch(): void {
    const now = Date.now();
    let handedBack = false;
    while (
      pulled.length > 0 &&
      (inflight < concurrency || !running || pulled[0]!.since <= now - leaseRealMs / 2)
    ) {
      const { m, since } = pulled.shift()!;
      if (running && inflight < concurrency) {
        if (since < now) renew(m);
        run(m);
      } else {
        handBack(m);
        handedBack = true;
      }
    }
    while (waiting.length > 0 && (inflight < concurrency || !running)) {
      const w = waiting.shift()!;
      if (running && w.startBy > now) runLocal(w);
      else w.declined();
    }
    if (handedBack) changed.wake();
    arm(now);
  }

  /** Keeps `sweep` due while messages wait: within an eighth of a lease (not reset by each dispatch). */
  function arm(now: number): void {
    if (waiting.length === 0 && pulled.length === 0) {
      if (sweeper) clearTimeout(sweeper);
      sweeper = undefined;
    } else if (!sweeper) {
      const next = Math.min(now + leaseRealMs / 8, (pulled[0]?.since ?? now) + leaseRealMs / 2);
      sweeper = setTimeout(sweep, Math.max(10, next - now));
    }
  }

  /**
   * Gives back the waiting messages of this process that may no longer start (they wait in the order
   * offered, and a transaction that began earlier may commit later: any of them may be first), then
   * dispatches.
   */
  function sweep(): void {
    sweeper = undefined;
    const now = Date.now();
    if (waiting.some((w) => w.startBy <= now)) {
      const keep: Waiting[] = [];
      for (const w of waiting.splice(0)) {
        if (w.startBy <= now) w.declined();
        else keep.push(w);
      }
      waiting.push(...keep);
    }
    dispatch();
  }

  /** One pull request for `n` messages; its credits count as taken until they arrive or it ends. */
  async function pull(consumer: Consumer, n: number): Promise<void> {
    outstanding += n;
    let received = 0;
    let batch: ConsumerMessages | undefined;
    try {
      batch = await consumer.fetch({ max_messages: n, expires: o.fetchExpiresMs });
      batches.add(batch);
      if (!running) void batch.close();
      for await (const m of batch) {
        received++;
        outstanding--;
        // Pulled after stop() began: hand it straight back rather than let it wait out its ack wait.
        if (!running) handBack(m);
        else if (inflight < concurrency && pulled.length === 0) run(m);
        else {
          pulled.push({ m, since: Date.now() });
          dispatch();
        }
      }
      failures = 0;
    } catch (err) {
      failure ??= err;
    } finally {
      outstanding -= n - received;
      if (batch) batches.delete(batch);
      changed.wake();
    }
  }

  const loop = (async () => {
    // Pull again once a quarter of the slots is free, not one by one: fewer, larger pull requests.
    const refill = Math.ceil(concurrency / 4);
    while (running) {
      try {
        const consumer = await o.topology.consumer(o.topic, realMs(o.clock, leaseMs));
        failure = undefined;
        while (running && failure === undefined) {
          const free = concurrency - inflight - outstanding - pulled.length - waiting.length;
          // Messages of this process waiting: JetStream keeps a quarter of the slots in turn.
          const share = waiting.length > 0 ? refill - pulledInflight - outstanding - pulled.length : 0;
          const n = Math.max(free, share);
          if (n >= refill || (n > 0 && outstanding === 0)) {
            const p = pull(consumer, n).finally(() => pulls.delete(p));
            pulls.add(p);
          } else await changed.wait(o.fetchExpiresMs, stopping.signal);
        }
        if (failure !== undefined) throw failure;
      } catch (err) {
        if (!running) break;
        // The stream or consumer may have been deleted: check them again before the next pull.
        o.topology.forget(o.topic);
        const ms = backoffMs(failures++, 250, 10_000);
        log.error('pulling messages failed; retrying', { err, retry_in_ms: ms });
        await pause(ms, stopping.signal);
      }
    }
  })();

  return {
    leaseRealMs,
    offer(msg, startBy, settled, declined) {
      if (!running || waiting.length >= concurrency * 4 || Date.now() >= startBy) return false;
      const w = { msg, startBy, settled, declined };
      // Pull credits do not count: what the server holds for this consumer waits its turn if it comes.
      if (inflight < concurrency && waiting.length === 0 && pulled.length === 0) runLocal(w);
      else {
        waiting.push(w);
        dispatch();
        changed.wake();
      }
      return true;
    },
    async stop() {
      if (!running) return;
      running = false;
      dispatch();
      stopping.abort();
      for (const b of batches) void b.close();
      await loop;
      await Promise.all(pulls);
      await Promise.all(handlers);
      flushSettled();
      // Acks are fire-and-forget publishes: make sure they have left before reporting stopped.
      await o.flush().catch(() => {});
    },
  };
}
