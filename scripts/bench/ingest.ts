/**
 * SDK ingest: events POSTed to /sdk/events through `service.fetchFrom` (an end user's request, a client
 * address, an allowed Origin), checked, published, fanned out by the webhooks router and delivered over
 * TLS to one webhook in another process. Accepted and delivered events per second, next to the webhooks
 * pipeline with one webhook (ctx.events.publish straight to the bus) measured in the same run.
 */
import { join } from 'node:path';
import postgres from 'postgres';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { loadConfig } from '../../core/config.ts';
import { eventDefinition } from '../../core/events/index.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { createService } from '../../entry/create-service.ts';
import { persons } from '../../plugins/persons/index.ts';
import { sdk } from '../../plugins/sdk/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { webhooks } from '../../plugins/webhooks/index.ts';
import { testTls } from '../../test/helpers/tls.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';
import { deleteStreams } from './streams.ts';
import { type Receivers, startReceivers, waitFor } from './webhooks.ts';

/** Client addresses the requests come from, in turn. */
const ADDRESSES = 250;

const EVENT = 'ServiceSDKLoaded_v1';
const ORIGIN = 'https://app.bench.example';
const now = () => performance.timeOrigin + performance.now();

interface Target {
  key: string;
  name: string;
  env: Record<string, string>;
  storage: () => Promise<Storage>;
  cleanup: () => Promise<void>;
}

/** One service with the SDK and one webhook of one organization subscribed to EVENT. */
async function serviceFor(target: Target, receivers: Receivers) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: 'https://ids.bench',
    DELIVERY_ALLOW_PRIVATE: '127.0.0.0/8',
    DELIVERY_HOST_MAP: 'hooks.test=127.0.0.1',
    NODE_EXTRA_CA_CERTS: join(testTls().dir, 'ca.pem'),
    // The limit must not be what the benchmark measures: its addresses send far more than 600 a minute.
    SDK_RATE_LIMIT: '1000000/1000000',
    ...target.env,
  });
  const service = await createService(config, {
    overrides: { storage: await target.storage() },
    definition: { plugins: [webhooks(), persons(), tokens(), sdk()] },
  });
  await service.start();
  const { organization, apiKey } = await service.ctx.orgs.create('bench-ingest');
  const h = service.ctx.headers;
  const admin = async (method: string, path: string, body: unknown) => {
    const r = await service.fetch(
      new Request(`http://localhost${path}`, {
        method,
        headers: { [h.orgId]: organization.id, [h.apiKey]: apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
    return r.json();
  };
  const hook = await admin('POST', '/organizations/webhooks', {
    name: 'bench',
    target_url: `https://hooks.test:${receivers.port}/ingest-${organization.id.slice(-6)}`,
  });
  await admin('POST', `/organizations/webhooks/${hook.result.id}/triggers`, {
    trigger_type: 'event',
    trigger_name: EVENT,
  });
  await admin('PUT', '/organizations/allowed-origins', { allowed_origins: [ORIGIN] });

  const definition = eventDefinition(EVENT)!;
  const members = definition.sample({ orgId: organization.id, now: Date.now() });
  /** The reference: one event through ctx.events.publish, as the webhooks section publishes. */
  const publish = async () => {
    const t = now();
    const event = await service.ctx.events.publishByName(organization.id, EVENT, members);
    return [{ id: event.event_metadata.event_id, t }];
  };
  const body = (n: number) =>
    JSON.stringify(
      Array.from({ length: n }, () => ({
        event_name: EVENT,
        browser_metadata: { window_location: `${ORIGIN}/p` },
      })),
    );
  const bodies = new Map<number, string>();
  // Requests come from ADDRESSES client addresses in turn, as an SDK's users do. One address is one
  // rate-limit bucket, on Postgres one row whose takes queue on its lock one commit after another.
  let sent = 0;
  const address = () => `198.51.100.${(sent++ % ADDRESSES) + 1}`;
  /** `n` events in one POST /sdk/events, as a browser on the allowed origin sends them. */
  const ingest = async (n: number) => {
    const text = bodies.get(n) ?? body(n);
    bodies.set(n, text);
    const t = now();
    const res = await service.fetchFrom(
      new Request('http://localhost/sdk/events', {
        method: 'POST',
        headers: {
          [h.orgId]: organization.id,
          'content-type': 'application/json',
          origin: ORIGIN,
          'user-agent': 'Mozilla/5.0 (bench)',
        },
        body: text,
      }),
      address(),
    );
    const answer = await res.text();
    if (res.status !== 202) throw new Error(`POST /sdk/events answered ${res.status} ${answer}`);
    const accepted = now() - t;
    return (JSON.parse(answer) as { result: { event_ids: string[] } }).result.event_ids.map((id) => ({
      id,
      t,
      accepted,
    }));
  };
  return { service, publish, ingest };
}

type Sent = Array<{ id: string; t: number; accepted?: number }>;

/** Sends `events` through `send` (`inflight` at a time), then waits for every one at the receiver. */
async function run(
  receivers: Receivers,
  send: () => Promise<Sent>,
  events: number,
  perCall: number,
  inflight: number,
) {
  const sent: Sent = [];
  const t0 = now();
  let calls = Math.ceil(events / perCall);
  await Promise.all(
    Array.from({ length: Math.min(inflight, calls) }, async () => {
      while (calls > 0) {
        calls--;
        sent.push(...(await send()));
      }
    }),
  );
  const acceptedAt = now();
  await waitFor(() => sent.every((s) => receivers.arrivals.has(s.id)), 180_000, 'every event at the webhook');
  const arrivals = sent.map((s) => receivers.arrivals.get(s.id)![0]!);
  const delivered = summarize(
    sent.map((s, i) => arrivals[i]! - s.t),
    Math.max(...arrivals) - t0,
  );
  const accepted = summarize(
    sent.map((s) => s.accepted ?? 0),
    acceptedAt - t0,
  );
  return { accepted, delivered };
}

export interface IngestBenchOptions {
  databaseUrl?: string;
  natsUrl?: string;
  /** Events per row. */
  events: number;
  /** Requests (or publishes) in flight. */
  inflight: number;
}

export async function benchIngest(o: IngestBenchOptions): Promise<string> {
  const receivers = await startReceivers();
  const targets: Target[] = [
    {
      key: 'pglite',
      name: 'pg-queue on PGlite (in memory)',
      env: {},
      storage: () => createPgliteStorage(),
      cleanup: async () => {},
    },
  ];
  const schema = `bench_in_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
  const drop = async (name: string) => {
    const sql = postgres(o.databaseUrl!, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema if exists ${name} cascade`);
    await sql.end();
  };
  if (o.databaseUrl)
    targets.push({
      key: 'postgres',
      name: 'pg-queue on Postgres',
      env: { DATABASE_URL: o.databaseUrl, DATABASE_SCHEMA: schema },
      storage: () => createPostgresStorage({ url: o.databaseUrl!, schema }),
      cleanup: () => drop(schema),
    });
  if (o.databaseUrl && o.natsUrl) {
    const prefix = `BENCHIN${Date.now()}`;
    targets.push({
      key: 'jetstream',
      name: 'JetStream (outbox on Postgres)',
      env: {
        DATABASE_URL: o.databaseUrl,
        DATABASE_SCHEMA: `${schema}_js`,
        NATS_URL: o.natsUrl,
        NATS_STREAM_PREFIX: prefix,
      },
      storage: () => createPostgresStorage({ url: o.databaseUrl!, schema: `${schema}_js` }),
      cleanup: async () => {
        await drop(`${schema}_js`);
        await deleteStreams(o.natsUrl!, prefix);
      },
    });
  }

  const lines: string[] = [];
  const line = (
    what: string,
    r: { accepted: Summary; delivered: Summary },
    bound?: Summary,
    request = true,
  ) =>
    lines.push(
      row([
        what,
        fmtRate(r.accepted.perSecond),
        fmtRate(r.delivered.perSecond),
        bound ? (r.delivered.perSecond / bound.perSecond).toFixed(2) : '',
        request ? `${fmtMs(r.accepted.p50)} / ${fmtMs(r.accepted.p99)}` : '',
        `${fmtMs(r.delivered.p50)} / ${fmtMs(r.delivered.p99)}`,
      ]),
    );
  try {
    for (const target of targets) {
      const s = await serviceFor(target, receivers);
      try {
        // Warm-up: keys made, connections open, statements planned, the origin list cached.
        const warm = [...(await s.ingest(1)), ...(await s.publish())];
        await waitFor(() => warm.every((w) => receivers.arrivals.has(w.id)), 30_000, 'the warm-up');
        const bound = await run(receivers, s.publish, o.events, 1, o.inflight);
        line(
          `reference: ${target.name}, webhooks pipeline (ctx.events.publish), 1 webhook`,
          bound,
          undefined,
          false,
        );
        for (const perCall of [1, 10]) {
          const r = await run(receivers, () => s.ingest(perCall), o.events, perCall, o.inflight);
          line(
            `${target.name}: POST /sdk/events, ${perCall} event${perCall > 1 ? 's' : ''} a request, 1 webhook`,
            r,
            bound.delivered,
          );
        }
      } finally {
        await s.service.stop();
        await target.cleanup();
      }
    }
  } finally {
    receivers.stop();
  }
  return [
    `End to end: POST /sdk/events through \`service.fetchFrom\` in this process (a client address, an allowed Origin, the body read, CORS, the rate limit of its address (${ADDRESSES} addresses in turn), each event checked against the catalogue and its metadata filled, one bus publish per request), then the webhooks router, delivery (ES256 JWT, HTTPS POST to a Bun.serve TLS receiver in another process) and the attempt recorded. ${o.events.toLocaleString('en')} events per row, ${o.inflight} requests (or publishes) in flight. Accepted: 202 answers' events per second, and the request's latency. Delivered: events at the receiver per second, and the latency from the request's start to the arrival (mostly queueing: events are accepted faster than they are delivered). The ratio is of the reference row above it: the webhooks pipeline with one webhook, events published one per bus call by ctx.events.publish, measured in the same run. It is the figure the ingest chases, not a strict bound: a request of 10 events is one bus call, and may deliver faster.`,
    '',
    row([
      'path',
      'accepted events/s',
      'delivered events/s',
      'delivered, ratio to the pipeline',
      'request p50 / p99 ms',
      'request to arrival p50 / p99 ms',
    ]),
    row(['---', '---', '---', '---', '---', '---']),
    ...lines,
  ].join('\n');
}
