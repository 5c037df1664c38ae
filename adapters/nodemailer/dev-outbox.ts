import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from '../../core/log.ts';
import type { Messenger, OutboundMessage } from '../../core/ports/messenger.ts';
import { CONTENT_LOCKS, mailOptions } from './compose.ts';

/** A message the development outbox kept. */
export interface OutboxEntry {
  id: string;
  to: string;
  subject: string;
  link: string | undefined;
  /** The whole message as RFC 5322 text, as the `.eml` file holds it. */
  eml: string;
  /** The file, when the outbox writes to a folder. */
  file: string | undefined;
}

export interface DevOutboxOptions {
  /** DATA_DIR/outbox; undefined keeps messages in memory (DATA_DIR=memory://). */
  dir: string | undefined;
  /** MAIL_FROM. */
  from: string;
  log: Logger;
  /** Messages kept in memory (the newest). @default 1000 */
  keep?: number;
}

/** The outbox's list of messages, one JSON object a line: `{time, id, to, subject, link, file}`. */
export const INDEX_FILE = 'index.jsonl';

/** A file name that sorts by time: `2026-01-01T10-00-00-000Z-<id>.eml`. */
const fileName = (message: OutboundMessage) =>
  `${new Date().toISOString().replace(/[:.]/g, '-')}-${message.id.replace(/[^A-Za-z0-9-]/g, '')}.eml`;

/**
 * The development outbox, the transport when no SMTP_URL is set (outside production, or chosen with
 * MAIL_OUTBOX=true): every message is composed exactly as SMTP would send it and written as an `.eml`
 * file under DATA_DIR/outbox (any mail client opens it), with one line in DATA_DIR/outbox/index.jsonl
 * giving its recipient, subject, link and file, or kept in memory. The log says a message arrived and
 * where, never its link: a reset or verification link in a log is a key to the account for whoever
 * reads the logs (a log collector, a support desk), and logs outlive the link's purpose.
 */
export function createDevOutbox(
  o: DevOutboxOptions,
): Messenger & { readonly messages: readonly OutboxEntry[] } {
  const composer = nodemailer.createTransport({
    streamTransport: true,
    buffer: true,
    newline: 'unix',
    ...CONTENT_LOCKS,
  });
  const keep = o.keep ?? 1000;
  const messages: OutboxEntry[] = [];
  let made: Promise<unknown> | undefined;
  return {
    kind: 'outbox',
    reaches: ['email_address'],
    messages,
    async send(message) {
      try {
        const info = await composer.sendMail(mailOptions(message, o.from));
        const eml = Buffer.isBuffer(info.message) ? info.message.toString('utf8') : String(info.message);
        let file: string | undefined;
        if (o.dir) {
          made ??= mkdir(o.dir, { recursive: true });
          await made;
          file = join(o.dir, fileName(message));
          await writeFile(file, eml, { mode: 0o600 });
          const line = {
            time: new Date().toISOString(),
            id: message.id,
            to: message.to.value,
            subject: message.subject,
            link: message.link ?? null,
            file,
          };
          await appendFile(join(o.dir, INDEX_FILE), `${JSON.stringify(line)}\n`, { mode: 0o600 });
        }
        messages.push({
          id: message.id,
          to: message.to.value,
          subject: message.subject,
          link: message.link,
          eml,
          file,
        });
        if (messages.length > keep) messages.splice(0, messages.length - keep);
        // Never the link, nor the text that carries it (see above): the file and the index hold them.
        o.log.info('message in the development outbox (no SMTP_URL)', {
          message_id: message.id,
          subject: message.subject,
          to: message.to.value,
          ...(o.dir && file ? { file, index: join(o.dir, INDEX_FILE) } : {}),
        });
        return { ok: true };
      } catch (err) {
        made = undefined;
        return { ok: false, permanent: false, error: err instanceof Error ? err.message : String(err) };
      }
    },
    async close() {},
  };
}
