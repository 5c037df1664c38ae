import { renameSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { cachedTestCa, testTls } from './tls.ts';

/** A certificate authority and a certificate it signed for 127.0.0.1, for STARTTLS on loopback. */
export interface SmtpTls {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** The CA's file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
}

const CACHE = join(import.meta.dir, '..', '..', '.cache', 'test-smtp-tls');
let cachedTls: SmtpTls | undefined;

/** Generated with the openssl CLI on first use, kept in .cache/test-smtp-tls/ for later runs. */
export function smtpTls(): SmtpTls {
  if (cachedTls) return cachedTls;
  const made = cachedTestCa({
    cache: 'test-smtp-tls',
    caName: 'smtp test CA',
    serverName: '127.0.0.1',
    subjectAltName: 'IP:127.0.0.1',
  });
  cachedTls = {
    caPem: made.caPem,
    certPem: made.certPem,
    keyPem: made.keyPem,
    caFile: join(made.dir, 'ca.pem'),
  };
  return cachedTls;
}

/**
 * One CA file trusting both test authorities (the webhook receivers' and the SMTP server's), for a
 * service that delivers webhooks and sends mail in the same test: NODE_EXTRA_CA_CERTS names one file.
 */
export function bothTestCas(): string {
  const file = join(CACHE, 'both-cas.pem');
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${testTls().caPem.trim()}\n${smtpTls().caPem.trim()}\n`);
  renameSync(tmp, file);
  return file;
}

/** A message the server accepted, as mailparser reads it, with how it arrived. */
export interface ReceivedMail {
  parsed: ParsedMail;
  raw: string;
  /** True when the session was upgraded with STARTTLS. */
  secure: boolean;
  envelopeTo: string[];
  at: number;
}

/**
 * What the server answers: `accept`, `defer` (451 at DATA: try later), `reject-recipient` (550 at RCPT
 * TO: no such mailbox) or `hold` (keeps the client waiting at DATA until released).
 */
export type SmtpMode = 'accept' | 'defer' | 'reject-recipient' | 'hold';

export interface TestSmtpServer {
  port: number;
  /** `smtp://127.0.0.1:<port>`. */
  url: string;
  mode: SmtpMode;
  received: ReceivedMail[];
  /** Messages refused or deferred so far. */
  refused: number;
  /** Messages held at DATA now (mode `hold`). */
  readonly holding: number;
  /** Lets every held message through, and the next ones (the mode becomes `accept`). */
  release(): void;
  /** Waits until `n` messages have arrived, or fails naming how many did. */
  waitFor(n: number, ms?: number): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

/**
 * A real SMTP server (the npm package smtp-server) on 127.0.0.1 offering STARTTLS with a certificate
 * for 127.0.0.1 (trust `smtpTls().caFile`), accepting any login, reading every message with mailparser.
 */
export async function startSmtpServer(o: { mode?: SmtpMode; tls?: boolean } = {}): Promise<TestSmtpServer> {
  const tls = o.tls === false ? undefined : smtpTls();
  const received: ReceivedMail[] = [];
  let held: Array<() => void> = [];
  const state = { mode: o.mode ?? ('accept' as SmtpMode), refused: 0 };
  const server = new SMTPServer({
    ...(tls ? { key: tls.keyPem, cert: tls.certPem } : { disabledCommands: ['STARTTLS'] }),
    authOptional: true,
    logger: false,
    onAuth: (_auth, _session, cb) => cb(null, { user: 'test' }),
    onRcptTo(_address, _session, cb) {
      if (state.mode === 'reject-recipient') {
        state.refused++;
        return cb(smtpError(550, '5.1.1 no such mailbox here'));
      }
      cb();
    },
    onData(stream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        if (state.mode === 'defer') {
          state.refused++;
          return cb(smtpError(451, '4.3.0 try again later'));
        }
        if (state.mode === 'hold') await new Promise<void>((r) => held.push(r));
        const raw = Buffer.concat(chunks).toString('utf8');
        received.push({
          parsed: await simpleParser(raw),
          raw,
          secure: session.secure,
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          at: Date.now(),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const release = () => {
    if (state.mode === 'hold') state.mode = 'accept';
    const waiting = held;
    held = [];
    for (const r of waiting) r();
  };
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(m: SmtpMode) {
      state.mode = m;
    },
    received,
    get refused() {
      return state.refused;
    },
    get holding() {
      return held.length;
    },
    release,
    async waitFor(n, ms = 10_000) {
      const end = Date.now() + ms;
      while (received.length < n) {
        if (Date.now() > end)
          throw new Error(`timed out after ${ms} ms: ${received.length} of ${n} messages arrived`);
        await new Promise((r) => setTimeout(r, 10));
      }
      return received.slice(0, n);
    },
    async stop() {
      release();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
