import type { HandleType } from '../capabilities/person-directory.ts';

/** Who a message goes to: one of a person's handles (an email address today; a phone number later). */
export interface MessageRecipient {
  type: HandleType;
  value: string;
}

/** A message to hand to a transport, as rendered: a subject, a plain-text body and an HTML body. */
export interface OutboundMessage {
  /** Unique per message: the Message-ID's local part and the name of the development outbox's file. */
  id: string;
  to: MessageRecipient;
  subject: string;
  text: string;
  html: string;
  /** The display name beside MAIL_FROM (the organization's name), when there is one. */
  fromName?: string;
  /**
   * The link the message carries (a reset or verification link). The development outbox lists it in
   * its index file so a newcomer can follow it; no transport ever logs it.
   */
  link?: string;
}

/**
 * What one attempt came to. `permanent` failures (the server refused the recipient with a 5xx) are not
 * retried; every other failure is, within the retry window.
 */
export type SendResult = { ok: true } | { ok: false; permanent: boolean; error: string };

/**
 * The Messenger port: hands one message to a transport and says whether the transport accepted it. It
 * never throws: every failure comes back as a result. Durability is not its concern: core's message
 * queue carries each message on the EventBus and retries what a transport refuses.
 *
 * @example
 * const result = await messenger.send({ id, to: { type: 'email_address', value: 'ada@example.com' }, subject, text, html });
 * if (!result.ok && !result.permanent) // try again later
 */
export interface Messenger {
  /** `smtp`, `outbox` (the development outbox), or another adapter's name. */
  readonly kind: string;
  /** The handle types this transport reaches: `email_address` for SMTP and the outbox. */
  readonly reaches: readonly HandleType[];
  send(message: OutboundMessage): Promise<SendResult>;
  close(): Promise<void>;
}
