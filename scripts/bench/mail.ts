/**
 * Password reset mail: reset requests accepted (202) per second with their messages queued, and the time
 * from a request to its message received by a real SMTP server on loopback (smtp-server, STARTTLS),
 * during a burst and one at a time, beside the bound of the transport: messages/s straight through
 * nodemailer's pool to the same server.
 */
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createService } from '../../entry/create-service.ts';
import { password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { smtpTls } from '../../test/helpers/smtp.ts';
import { rate } from './attributes.ts';
import { fmtMs, fmtRate, percentile, row, type Summary } from './stats.ts';

const UNLIMITED = { perMinute: 1_000_000, burst: 1_000_000 };

/** A loopback SMTP server offering STARTTLS that records, for each recipient, when its message ended. */
async function smtpSink() {
  const tls = smtpTls();
  const arrivals: Array<{ to: string; at: number }> = [];
  const server = new SMTPServer({
    key: tls.keyPem,
    cert: tls.certPem,
    authOptional: true,
    logger: false,
    onData(stream, session, cb) {
      stream.on('data', () => {});
      stream.on('end', () => {
        const at = performance.now();
        for (const r of session.envelope.rcptTo) arrivals.push({ to: r.address, at });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    arrivals,
    async until(n: number, ms: number) {
      const end = performance.now() + ms;
      while (arrivals.length < n && performance.now() < end) await new Promise((r) => setTimeout(r, 5));
      if (arrivals.length < n)
        throw new Error(`only ${arrivals.length} of ${n} messages arrived in ${ms} ms`);
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Raw sends through nodemailer's pool (5 connections, STARTTLS) to the sink: the transport's bound. */
async function transportBound(sink: Awaited<ReturnType<typeof smtpSink>>, inflight: number, ms: number) {
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 5,
    host: '127.0.0.1',
    port: sink.port,
    secure: false,
    tls: { ca: smtpTls().caPem },
  });
  let n = 0;
  const summary = await rate(
    () =>
      transport.sendMail({
        from: 'no-reply@ids.bench',
        to: `bound${n++}@example.com`,
        subject: 'Reset your bench password',
        text: 'x'.repeat(600),
        html: `<p>${'x'.repeat(1200)}</p>`,
      }),
    inflight,
    ms,
  );
  transport.close();
  return summary;
}

export async function benchMail(o: { seconds: number; inflight: number; persons: number; serial: number }) {
  const ms = o.seconds * 1000;
  const sink = await smtpSink();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: 'https://ids.bench',
    SMTP_URL: sink.url,
    MAIL_FROM: 'no-reply@ids.bench',
    NODE_EXTRA_CA_CERTS: smtpTls().caFile,
  });
  const service = await createService(config, {
    log: createLogger('silent'),
    overrides: { storage: await createPgliteStorage() },
    definition: {
      plugins: [
        persons(),
        tokens(),
        // The limits would refuse the benchmark's requests: they are not what is measured.
        password({ resetHandleRateLimit: UNLIMITED, resetAddressRateLimit: UNLIMITED }),
      ],
    },
  });
  const { organization, apiKey } = await service.ctx.orgs.create('bench');
  const h = service.ctx.headers;
  const call = async (path: string, body: unknown, key: boolean) => {
    const res = await service.fetch(
      new Request(`http://localhost${path}`, {
        method: 'POST',
        headers: {
          [h.orgId]: organization.id,
          ...(key ? { [h.apiKey]: apiKey } : {}),
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      }),
    );
    const text = await res.text();
    if (res.status >= 300) throw new Error(`POST ${path} answered ${res.status} ${text}`);
  };
  const address = (i: number) => `person${i}@example.com`;
  for (let i = 0; i < o.persons + o.serial; i++)
    await call('/persons', { handles: [{ type: 'email_address', value: address(i) }] }, true);
  const reset = (i: number) =>
    call('/authenticate/password/reset', { handle: { type: 'email_address', value: address(i) } }, false);

  // The request path alone, its workers not started yet: what an accepted request costs by itself.
  let m = 0;
  const alone = await rate(() => reset(m++ % o.persons), o.inflight, ms);
  await service.start();
  await sink.until(m, 300_000);
  sink.arrivals.length = 0;

  // One at a time: each request's message received before the next request.
  const serial: number[] = [];
  for (let i = 0; i < o.serial; i++) {
    const started = performance.now();
    await reset(o.persons + i);
    await sink.until(i + 1, 30_000);
    serial.push(sink.arrivals[i]!.at - started);
  }

  // A burst: requests as fast as they are accepted; each message's latency from its request's start.
  const before = sink.arrivals.length;
  const startedAt: number[] = [];
  let n = 0;
  const burstStart = performance.now();
  const accepted = await rate(
    async () => {
      const i = n++;
      startedAt.push(performance.now());
      await reset(i % o.persons);
    },
    o.inflight,
    ms,
  );
  await sink.until(before + n, 300_000);
  const drainedAt = sink.arrivals.at(-1)!.at;
  // Messages of a person arrive in its requests' order (one at a time per person is not promised, so
  // pair the k-th message to a person with that person's k-th request).
  const byPerson = new Map<string, number[]>();
  startedAt.forEach((at, i) => {
    const to = address(i % o.persons);
    byPerson.set(to, [...(byPerson.get(to) ?? []), at]);
  });
  const seen = new Map<string, number>();
  const loaded = sink.arrivals.slice(before).map((a) => {
    const k = seen.get(a.to) ?? 0;
    seen.set(a.to, k + 1);
    return a.at - (byPerson.get(a.to)?.[k] ?? a.at);
  });
  await service.stop();

  const bound = await transportBound(sink, 16, ms);
  await sink.stop();

  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const latency = (xs: number[]): Summary => {
    const s = sorted(xs);
    return { count: s.length, perSecond: Number.NaN, p50: percentile(s, 50), p99: percentile(s, 99) };
  };
  const drain = (n / (drainedAt - burstStart)) * 1000;
  const line = (name: string, perSecond: string, s: Pick<Summary, 'p50' | 'p99'>, fraction = '') =>
    row([name, perSecond, fmtMs(s.p50), fmtMs(s.p99), fraction]);
  return [
    `POST /authenticate/password/reset through \`service.fetch\` in this process with the persons, tokens and password plugins on PGlite (pg-queue), rate limits lifted; messages go over SMTP with STARTTLS to smtp-server on loopback through the service's nodemailer pool (5 connections). An accepted request is one durable publish; a worker then finds the person, issues the token and queues the message in one transaction, and the message worker sends it. ${o.seconds} s burst, ${o.inflight} in flight over ${o.persons} persons; ${o.serial} requests one at a time before it.`,
    '',
    row(['what', 'per second', 'p50 ms', 'p99 ms', 'fraction of bound']),
    row(['---', '---', '---', '---', '---']),
    line(
      `bound: reset requests accepted with the workers stopped (the request path alone), ${o.inflight} in flight`,
      fmtRate(alone.perSecond),
      alone,
    ),
    line(
      `reset requests accepted (202) while the workers send, ${o.inflight} in flight`,
      fmtRate(accepted.perSecond),
      accepted,
      (accepted.perSecond / alone.perSecond).toFixed(2),
    ),
    line(
      `messages received by the SMTP server, burst start to the last (${n} messages)`,
      fmtRate(drain),
      { p50: Number.NaN, p99: Number.NaN },
      (drain / bound.perSecond).toFixed(2),
    ),
    line('request to message received, during the burst', '', latency(loaded)),
    line('request to message received, one at a time', '', latency(serial)),
    line(
      'bound: raw sends through a nodemailer pool (5 connections) to the same server, 16 in flight',
      fmtRate(bound.perSecond),
      bound,
    ),
  ].join('\n');
}
