import { uuidv7 } from '../ids.ts';
import type { Logger } from '../log.ts';
import type { Worker } from '../plugin.ts';
import type { Clock } from '../ports/clock.ts';
import {
  ack,
  type Delivered,
  drop,
  type EventBus,
  type Outcome,
  retry,
  type Subscription,
} from '../ports/event-bus.ts';
import type { MessageRecipient, Messenger, OutboundMessage } from '../ports/messenger.ts';
import type { SecretBox } from '../ports/secret-box.ts';
import type { Transaction } from '../ports/storage.ts';
import { type MessageCounters, noCounters } from './counters.ts';

/** The bus topic that carries messages to send: the queue that also carries webhook deliveries. */
export const MESSAGES_TOPIC = 'messages';

/** A message to send, as a plugin hands it over (rendered from a template, see `ctx.messages.template`). */
export interface QueuedMessage {
  orgId: string;
  to: MessageRecipient;
  subject: string;
  text: string;
  html: string;
  /** The display name beside MAIL_FROM: the organization's name. */
  fromName?: string;
  /** The link the message carries: listed by the development outbox (never logged). */
  link?: string;
  /** What the message is, for logs and counters: its template's name. */
  kind: string;
  /** Clock milliseconds after which sending it is pointless (its link has expired): dropped then. */
  notAfter?: number;
}

/**
 * A message sealed and ready to queue (`ctx.messages.prepare`): sealing awaits WebCrypto, so a caller
 * that queues inside a transaction prepares first and holds no database connection while it seals.
 */
export interface PreparedMessage {
  readonly prepared: true;
  readonly id: string;
  readonly payload: MessagePayload;
}

/** The payload on MESSAGES_TOPIC. The message itself is sealed: a queued reset link is a secret at rest. */
type MessagePayload = {
  id: string;
  org: string;
  kind: string;
  queued_at: number;
  not_after: number | null;
  sealed: string;
};

export interface MessageQueueOptions {
  bus: EventBus;
  messenger: Messenger;
  secrets: SecretBox;
  clock: Clock;
  log: Logger;
  /** How long after it was queued a message is still retried. @default 3600000 (an hour) */
  retryWindowMs?: number;
  /** Where sent, retried and dropped messages are counted (the operations' metrics). @default none */
  counters?: MessageCounters;
  /** Messages sent at once by each replica. @default 16 */
  concurrency?: number;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** The longest a claimed message may take (connect, greeting and data timeouts of SMTP) before another replica may take it. */
const LEASE_REAL_MS = 90 * SECOND;

/** The delay after the `n`-th failed attempt: 30 s, 1, 2, 4, 8 minutes, then 10 minutes each. */
export function messageBackoffMs(failedAttempts: number): number {
  const n = Math.max(1, Math.floor(failedAttempts));
  return Math.min(10 * MINUTE, 30 * SECOND * 2 ** Math.min(n - 1, 10));
}

const sealContext = (id: string) => `message:${id}`;

/**
 * Durable sending: `send` seals a message and publishes it on MESSAGES_TOPIC (with `tx`, in the
 * caller's transaction), so the request that asked for it never waits on a mail server. The worker
 * hands each message to the Messenger; a refusal is retried after 30 s, 1, 2, 4, 8, then every 10
 * minutes while within the retry window (and before the message's own `notAfter`), then dropped with a
 * log line and a count. A permanent refusal (the recipient refused with a 5xx) is dropped at once.
 */
export function createMessageQueue(o: MessageQueueOptions) {
  const { bus, messenger, secrets, clock } = o;
  const log = o.log.child({ component: 'messages' });
  const windowMs = o.retryWindowMs ?? 60 * MINUTE;
  const counters = o.counters ?? noCounters;

  const windowEnded = (attempts: number) =>
    `the retry window of ${Math.round(windowMs / MINUTE)} minutes ended after ${attempts} attempts`;

  async function prepare(message: QueuedMessage): Promise<PreparedMessage> {
    if (!messenger.reaches.includes(message.to.type))
      throw new Error(
        `no transport reaches a ${message.to.type} (this deployment sends to ${messenger.reaches.join(', ') || 'nothing'})`,
      );
    const now = clock.now();
    const id = uuidv7(now);
    const content: Omit<OutboundMessage, 'id'> = {
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      ...(message.fromName ? { fromName: message.fromName } : {}),
      ...(message.link ? { link: message.link } : {}),
    };
    const payload: MessagePayload = {
      id,
      org: message.orgId,
      kind: message.kind,
      queued_at: now,
      not_after: message.notAfter ?? null,
      sealed: await secrets.seal(JSON.stringify(content), sealContext(id)),
    };
    return { prepared: true, id, payload };
  }

  async function send(
    message: QueuedMessage | PreparedMessage,
    options: { tx?: Transaction } = {},
  ): Promise<void> {
    const ready = 'prepared' in message ? message : await prepare(message);
    await bus.publish(MESSAGES_TOPIC, [{ id: ready.id, payload: ready.payload }], options);
  }

  async function handle(msg: Delivered<MessagePayload>): Promise<Outcome> {
    const p = msg.payload;
    if (typeof p?.id !== 'string' || typeof p.sealed !== 'string')
      return drop('not a message of this service');
    const fields = { message_id: p.id, org_id: p.org, kind: p.kind, attempt: msg.attempt };
    let content: Omit<OutboundMessage, 'id'>;
    try {
      content = JSON.parse(await secrets.open(p.sealed, sealContext(p.id)));
    } catch (err) {
      counters.count('dropped', p.kind);
      log.error('message dropped: it does not open with the master keys', { ...fields, err });
      return drop('the sealed message does not open');
    }
    const now = clock.now();
    const expired = p.not_after !== null && now > p.not_after;
    if (expired || now > p.queued_at + windowMs) {
      counters.count('dropped', p.kind);
      const why = expired ? 'its link expired before it could be sent' : windowEnded(msg.attempt - 1);
      log.error(`message dropped: ${why}`, { ...fields, transport: messenger.kind });
      return drop(why);
    }
    const result = await messenger.send({ id: p.id, ...content });
    if (result.ok) {
      counters.count('sent', p.kind);
      log.info('message sent', { ...fields, transport: messenger.kind });
      return ack();
    }
    const delay = messageBackoffMs(msg.attempt);
    const late = p.not_after !== null && now + delay > p.not_after;
    if (result.permanent || late || now + delay > p.queued_at + windowMs) {
      counters.count('dropped', p.kind);
      const why = result.permanent
        ? 'the transport refused it for good'
        : late
          ? 'its link expires before the next attempt'
          : windowEnded(msg.attempt);
      log.error(`message dropped: ${why}`, { ...fields, transport: messenger.kind, error: result.error });
      return drop(`${why}: ${result.error}`);
    }
    counters.count('retried', p.kind);
    log.warn('message not accepted; retrying', {
      ...fields,
      transport: messenger.kind,
      error: result.error,
      retry_in_ms: delay,
    });
    return retry(delay);
  }

  let subscription: Subscription | undefined;
  const worker: Worker = {
    name: 'messages',
    start() {
      subscription = bus.consume<MessagePayload>(MESSAGES_TOPIC, handle, {
        concurrency: o.concurrency ?? 16,
        leaseMs: LEASE_REAL_MS * clock.rate,
      });
    },
    async stop() {
      await subscription?.stop();
      subscription = undefined;
    },
  };

  return {
    prepare,
    send,
    /** Whether the deployment's transport reaches handles of this type. */
    reaches: (type: MessageRecipient['type']) => messenger.reaches.includes(type),
    handle,
    worker,
  };
}

export type MessageQueue = ReturnType<typeof createMessageQueue>;
