import type { HandleType } from '../capabilities/person-directory.ts';
import type { Transaction } from '../ports/storage.ts';
import type { PreparedMessage, QueuedMessage } from './queue.ts';
import type { MessageTemplate, TemplateRenderer } from './templates.ts';

/**
 * Messages to people, as plugins send them (`ctx.messages`): templates the deployment may replace,
 * and durable sending through the bus (a refused message is retried; the request never waits on it).
 *
 * @example
 * const render = ctx.messages.template(welcome);              // in setup: overrides are checked at start
 * const { subject, text, html } = render({ organization: org.name, link });
 * const ready = await ctx.messages.prepare({ orgId, to: handle, subject, text, html, link, kind: welcome.name });
 * await ctx.storage.transaction((tx) => ctx.messages.send(ready, { tx }));
 */
export interface Messages {
  /** The template as this deployment has it: MAIL_TEMPLATES_DIR's files where there are some. */
  template<const V extends string>(template: MessageTemplate<V>): TemplateRenderer<V>;
  /**
   * Seals a message for `send`. Inside a transaction, prepare before it opens: sealing awaits
   * WebCrypto, and an embedded database holds its one connection for the whole transaction.
   */
  prepare(message: QueuedMessage): Promise<PreparedMessage>;
  /**
   * Queues a message (or a prepared one) durably: resolves once it is persisted (with `tx`, it commits
   * or rolls back with the caller's writes). Throws for a handle type no transport of the deployment
   * reaches.
   */
  send(message: QueuedMessage | PreparedMessage, options?: { tx?: Transaction }): Promise<void>;
  /** Whether the deployment's transport reaches handles of this type (`email_address` today). */
  reaches(type: HandleType): boolean;
}
