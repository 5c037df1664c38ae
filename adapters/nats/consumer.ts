import type { Consumer, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Logger } from '../../core/log.ts';
import { type Clock, realMs } from '../../core/ports/clock.ts';
import type {
  ConsumeOptions,
  Handler,
  JsonValue,
  Outcome,
  Subscription,
} from '../../core/ports/event-bus.ts';
import type { Topology } from './streams.ts';
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

/**
 * One consumer loop on the topic's durable pull consumer. Handlers running plus messages asked for
 * never exceed `concurrency`, so no message waits in a local buffer while its ack wait runs out.
 */
export function runConsumer<T>(o: ConsumerOptions<T>): Subscription {
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

  async function handle(m: JsMsg): Promise<void> {
    const id = m.headers?.get('Nats-Msg-Id') || `${m.info.stream}:${m.seq}`;
    let payload: JsonValue;
    try {
      payload = m.json<JsonValue>();
    } catch (err) {
      return settle(m, id, { kind: 'drop', reason: `payload is not JSON: ${(err as Error).message}` });
    }
    let outcome: Outcome;
    try {
      outcome = await o.handler({ id, topic: o.topic, payload: payload as T, attempt: m.info.deliveryCount });
    } catch (err) {
      log.error('handler failed; retrying', { err, msg_id: id, attempt: m.info.deliveryCount });
      outcome = { kind: 'retry', delayMs: errorRetryMs };
    }
    settle(m, id, outcome);
  }

  function run(m: JsMsg): void {
    inflight++;
    const p = handle(m).finally(() => {
      inflight--;
      handlers.delete(p);
      changed.wake();
    });
    handlers.add(p);
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
        if (running) run(m);
        else m.nak();
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
          const free = concurrency - inflight - outstanding;
          if (free >= refill || (free > 0 && outstanding === 0)) {
            const p = pull(consumer, free).finally(() => pulls.delete(p));
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
    async stop() {
      if (!running) return;
      running = false;
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
