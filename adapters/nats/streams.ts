import {
  AckPolicy,
  type Consumer,
  type ConsumerConfig,
  DeliverPolicy,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
} from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { BusError, type JsonValue } from '../../core/ports/event-bus.ts';

const NS_PER_MS = 1_000_000;
/** JetStream API error codes this module tells apart. */
const STREAM_NAME_IN_USE = 10058;
/** Also what nats-server 2.9 may answer the loser of two creates of one stream at once. */
const SUBJECTS_OVERLAP = 10065;
const CONSUMER_ALREADY_EXISTS = 10148;
const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;
/** Publishes to a subject no stream answered on, before giving up (25, 50, 75 ms apart). */
const NO_RESPONDERS_ATTEMPTS = 4;

/**
 * The header of a message that consumers of one process attempted before it reached JetStream (its
 * outbox row's `attempts`): a consumer counts them into the attempt it hands its handler.
 */
export const ATTEMPTS_HEADER = 'Bus-Attempts';

/** The durable pull consumer every replica shares on a topic's stream. */
export const CONSUMER_NAME = 'workers';

/** The client's answer to a JetStream publish nothing answered (its JetStreamNotEnabled, not exported). */
const isNoResponders = (err: unknown): boolean => err instanceof Error && err.name === 'JetStreamNotEnabled';

/** A topic's stream: `${prefix}_${topic}`, with `-` (allowed in topics, not in stream names) as `_`. */
export const streamNameOf = (prefix: string, topic: string): string =>
  `${prefix}_${topic}`.replaceAll('-', '_');
export const subjectOf = (prefix: string, topic: string): string => `${prefix}.${topic}`;

export interface TopologyOptions {
  jsm: JetStreamManager;
  js: JetStreamClient;
  prefix: string;
  /** How long JetStream remembers a Nats-Msg-Id to drop a second publish of it. */
  duplicateWindowMs: number;
  /** How long to wait for a PubAck. */
  timeoutMs: number;
}

/**
 * The streams and consumers of the bus, created or updated on first use. Every step is idempotent
 * because several replicas start, and meet the same missing stream, at once.
 */
export class Topology {
  private readonly streams = new Map<string, Promise<string>>();

  constructor(private readonly o: TopologyOptions) {}

  /** The name of the topic's stream, made ready once per process (again after a failure). */
  stream(topic: string): Promise<string> {
    let ready = this.streams.get(topic);
    if (!ready) {
      ready = this.ensureStream(topic);
      this.streams.set(topic, ready);
      ready.catch(() => this.streams.delete(topic));
    }
    return ready;
  }

  /** The topics this process has published to or consumed from. */
  topics(): string[] {
    return [...this.streams.keys()];
  }

  /**
   * The messages of a topic not yet settled, and when the oldest was stored. The shared consumer says
   * which: those not yet delivered and those delivered and not yet acknowledged (retries waiting out
   * their delay among them). The stream's own count would also hold dropped (terminated) messages,
   * which a work queue keeps. The oldest is the one just past the consumer's acknowledgement floor.
   */
  async state(topic: string): Promise<{ depth: number; oldest: number | null }> {
    const stream = streamNameOf(this.o.prefix, topic);
    try {
      const info = await this.o.jsm.consumers.info(stream, CONSUMER_NAME);
      const depth = info.num_pending + info.num_ack_pending;
      if (depth === 0) return { depth, oldest: null };
      const next = await this.o.jsm.streams
        .getMessage(stream, { seq: info.ack_floor.stream_seq + 1 })
        .catch(() => null);
      if (next) return { depth, oldest: next.time.getTime() };
      // That one is gone (a limit removed it): the stream's first message is the nearest bound.
      const { state } = await this.o.jsm.streams.info(stream);
      return { depth, oldest: state.messages > 0 ? Date.parse(state.first_ts) : null };
    } catch (err) {
      if (!(err instanceof JetStreamApiError)) throw err;
      if (err.code === STREAM_NOT_FOUND) return { depth: 0, oldest: null };
      if (err.code !== CONSUMER_NOT_FOUND) throw err;
      // Published to, never consumed: everything the stream holds waits.
      const { state } = await this.o.jsm.streams.info(stream);
      return { depth: state.messages, oldest: state.messages > 0 ? Date.parse(state.first_ts) : null };
    }
  }

  /** Forgets what is known of a topic's stream, so that the next use checks it again (it may be deleted). */
  forget(topic: string): void {
    this.streams.delete(topic);
  }

  /**
   * Publishes one message and resolves once JetStream has stored it (or dropped it as a duplicate).
   * `attempts`: how many times a consumer handled it already (see ATTEMPTS_HEADER).
   */
  async publish(topic: string, id: string, payload: JsonValue, attempts = 0): Promise<void> {
    const subject = subjectOf(this.o.prefix, topic);
    const data = JSON.stringify(payload);
    const options = { msgID: id, timeout: this.o.timeoutMs, ...attemptsHeader(attempts) };
    for (let attempt = 1; ; attempt++) {
      await this.stream(topic);
      try {
        await this.o.js.publish(subject, data, options);
        return;
      } catch (err) {
        // No stream answered on the subject: one another replica made a moment ago may not listen yet
        // (nats-server 2.9 answers "no responders" then), or it was deleted. Check it again (made anew
        // if missing) and publish again; the same Nats-Msg-Id keeps that from storing it twice.
        if (!isNoResponders(err) || attempt >= NO_RESPONDERS_ATTEMPTS) throw err;
        this.forget(topic);
        await new Promise((resolve) => setTimeout(resolve, 25 * attempt));
      }
    }
  }

  /** The topic's durable consumer with this ack wait, created or updated to it. */
  async consumer(topic: string, ackWaitMs: number): Promise<Consumer> {
    const stream = await this.stream(topic);
    const changes = {
      ack_wait: Math.max(1, ackWaitMs) * NS_PER_MS,
      max_deliver: -1,
      // Messages waiting out a nak delay count as pending; a retry window of many minutes would
      // otherwise stall the consumer at the server's default of 1000.
      max_ack_pending: -1,
    } satisfies Partial<ConsumerConfig>;
    try {
      await this.o.jsm.consumers.add(stream, {
        durable_name: CONSUMER_NAME,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...changes,
      });
    } catch (err) {
      // Servers from 2.10 refuse to change a consumer through create; older ones update in place.
      if (!(err instanceof JetStreamApiError) || err.code !== CONSUMER_ALREADY_EXISTS) throw err;
      await this.o.jsm.consumers.update(stream, CONSUMER_NAME, changes);
    }
    return this.o.js.consumers.get(stream, CONSUMER_NAME);
  }

  private async ensureStream(topic: string): Promise<string> {
    const name = streamNameOf(this.o.prefix, topic);
    const subjects = [subjectOf(this.o.prefix, topic)];
    const duplicate_window = this.o.duplicateWindowMs * NS_PER_MS;
    try {
      await this.o.jsm.streams.add({
        name,
        subjects,
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        duplicate_window,
      });
    } catch (err) {
      if (!(err instanceof JetStreamApiError)) throw err;
      if (err.code !== STREAM_NAME_IN_USE && err.code !== SUBJECTS_OVERLAP) throw err;
      // It exists (made by another replica a moment ago, or with another configuration): keep an
      // operator's limits, set what the bus relies on.
      const config = await this.o.jsm.streams.info(name).then(
        (info) => info.config,
        (cause: unknown) => {
          // No stream of that name: the subjects belong to another stream.
          if (
            err.code === SUBJECTS_OVERLAP &&
            cause instanceof JetStreamApiError &&
            cause.code === STREAM_NOT_FOUND
          )
            throw new BusError(
              'UNAVAILABLE',
              `another stream than ${name} takes the subjects ${subjects.join(', ')}: delete it or use another streamPrefix`,
              { cause: err },
            );
          throw cause;
        },
      );
      if (config.retention !== RetentionPolicy.Workqueue)
        throw new BusError(
          'UNAVAILABLE',
          `stream ${name} exists with ${config.retention} retention, the bus needs workqueue: delete it or use another streamPrefix`,
        );
      if (config.duplicate_window !== duplicate_window || config.subjects.join() !== subjects.join())
        await this.o.jsm.streams.update(name, { ...config, subjects, duplicate_window });
    }
    return name;
  }
}

function attemptsHeader(attempts: number) {
  if (attempts <= 0) return {};
  const h = headers();
  h.set(ATTEMPTS_HEADER, String(attempts));
  return { headers: h };
}
