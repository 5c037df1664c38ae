import { rootCertificates } from 'node:tls';
import nodemailer from 'nodemailer';
import type { Logger } from '../../core/log.ts';
import type { Messenger, SendResult } from '../../core/ports/messenger.ts';
import { CONTENT_LOCKS, mailOptions } from './compose.ts';

export interface SmtpOptions {
  /** SMTP_URL: `smtp://user:pass@host:587` (STARTTLS whenever the server offers it) or `smtps://host:465`. */
  url: string;
  /** MAIL_FROM. */
  from: string;
  /** PEM of extra certificate authorities (NODE_EXTRA_CA_CERTS), trusted besides the system's. */
  extraCaPem?: string | undefined;
  log: Logger;
  /** Connections kept open to the server. @default 5 */
  maxConnections?: number;
  /** Milliseconds to connect and to get the greeting; the socket's idle limit is three times it. @default 10000 */
  timeoutMs?: number;
}

/** What nodemailer's errors carry: its own code, the SMTP reply code, and the command that failed. */
interface SmtpFailure {
  code?: string;
  responseCode?: number;
  command?: string;
  message?: string;
}

/**
 * A refusal is permanent only when the server refused the recipient with a 5xx (no such mailbox):
 * sending again cannot help. Anything else (a 4xx, a refused connection, a timeout, a TLS problem,
 * a 5xx at another step) may pass later, so it is retried within the window.
 */
export function classifySmtpError(err: unknown): SendResult {
  const e = (err ?? {}) as SmtpFailure;
  const permanent = (e.responseCode ?? 0) >= 500 && e.command === 'RCPT TO';
  const parts = [e.code, e.responseCode, e.command].filter((x) => x !== undefined).join(' ');
  const error = `${parts ? `${parts}: ` : ''}${e.message ?? String(err)}`.slice(0, 500);
  return { ok: false, permanent, error };
}

/**
 * The SMTP transport through nodemailer: a pool of connections, STARTTLS whenever the server offers it
 * (with certificate checks), implicit TLS for `smtps://`. Never throws: a refusal comes back as a result.
 */
export function createSmtpMessenger(o: SmtpOptions): Messenger {
  const url = new URL(o.url);
  const secure = url.protocol === 'smtps:';
  const timeout = o.timeoutMs ?? 10_000;
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: o.maxConnections ?? 5,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(url.username
      ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
      : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout * 3,
    ...(o.extraCaPem ? { tls: { ca: [...rootCertificates, o.extraCaPem] } } : {}),
    ...CONTENT_LOCKS,
  });
  return {
    kind: 'smtp',
    reaches: ['email_address'],
    async send(message) {
      try {
        await transport.sendMail(mailOptions(message, o.from));
        return { ok: true };
      } catch (err) {
        return classifySmtpError(err);
      }
    },
    async close() {
      transport.close();
    },
  };
}
