import { join } from 'node:path';
import postgres from 'postgres';
import { systemClock } from '../../adapters/clock/system.ts';
import { createFetchDelivery } from '../../adapters/fetch-delivery/index.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createPgQueueBus, pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { loadConfig } from '../../core/config.ts';
import { migrate } from '../../core/db/migrate.ts';
import { eventDefinition } from '../../core/events/index.ts';
import { createLogger } from '../../core/log.ts';
import { ack, type EventBus } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { createService } from '../../entry/create-service.ts';
import { webhooks } from '../../plugins/webhooks/index.ts';
import { testTls } from '../../test/helpers/tls.ts';
import { ROOT } from './processes.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';
import { deleteStreams } from './streams.ts';

const log = createLogger('silent');
const now = () => performance.timeOrigin + performance.now();
const EVENT = 'PersonIdentified_v1';

/** The receivers' process, and when each event reached them (the ingest section uses them too). */
export async function startReceivers() {
  const arrivals = new Map<string, number[]>();
  let count = 0;
  let onPort: (port: number) => void = () => {};
  const ready = new Promise<number>((r) => {
    onPort = r;
  });
  const child = Bun.spawn([process.execPath, join(ROOT, 'scripts/bench/webhook-receiver.ts')], {
    stdout: 'inherit',
    stderr: 'inherit',
    ipc(message: { port: number } | Array<[string, number]>) {
      if (!Array.isArray(message)) return onPort(message.port);
      for (const [sub, at] of message) {
        const list = arrivals.get(sub);
        if (list) list.push(at);
        else arrivals.set(sub, [at]);
        count++;
      }
    },
  });
  return { port: await ready, pid: child.pid, arrivals, received: () => count, stop: () => child.kill() };
}

export type Receivers = Awaited<ReturnType<typeof startReceivers>>;

export async function waitFor(cond: () => boolean, ms: number, what: string) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

/** The HTTPS bound: the delivery adapter itself POSTing to the receivers, `inflight` at a time. */
export async function rawHttps(port: number, inflight: number, ms: number): Promise<Summary> {
  const delivery = createFetchDelivery({
    allowPrivate: ['127.0.0.0/8'],
    hostMap: { 'hooks.test': '127.0.0.1' },
    extraCaPem: testTls().caPem,
    log,
  });
  const body = 'x'.repeat(1000);
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        const r = await delivery.post({
          url: `https://hooks.test:${port}/raw`,
          headers: { 'content-type': 'application/octet-stream' },
          body,
          timeoutMs: 10_000,
        });
        if (!r.ok) throw new Error(`raw POST failed: ${r.error ?? r.status}`);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const s = summarize(latencies, performance.now() - t0);
  await delivery.close();
  return s;
}

/** The bus bound: 1 KiB messages published `inflight` at a time, consumed and acknowledged. */
export async function rawBus(bus: EventBus, n: number, inflight: number): Promise<Summary> {
  const topic = `raw-${crypto.randomUUID().slice(0, 8)}`;
  const latencies: number[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const sub = bus.consume<{ t: number }>(
    topic,
    async (m) => {
      latencies.push(now() - m.payload.t);
      if (latencies.length === n) done();
      return ack();
    },
    { concurrency: 256 },
  );
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < n) {
        next++;
        await bus.publish(topic, [{ payload: { t: now(), p: 'x'.repeat(1000) } }]);
      }
    }),
  );
  await finished;
  const s = summarize(latencies, performance.now() - t0);
  await sub.stop();
  return s;
}

interface Adapter {
  name: string;
  env: Record<string, string>;
  storage: () => Promise<Storage>;
  bus: (storage: Storage) => Promise<EventBus>;
  migrations: Parameters<typeof migrate>[1];
  cleanup: () => Promise<void>;
}

/** One service with the webhooks plugin, in this process, delivering to the receivers. */
async function serviceFor(a: Adapter, receivers: Receivers) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: 'https://ids.bench',
    DELIVERY_ALLOW_PRIVATE: '127.0.0.0/8',
    DELIVERY_HOST_MAP: 'hooks.test=127.0.0.1',
    NODE_EXTRA_CA_CERTS: join(testTls().dir, 'ca.pem'),
    ...a.env,
  });
  const service = await createService(config, {
    overrides: { storage: await a.storage() },
    definition: { plugins: [webhooks()] },
  });
  await service.start();
  const definition = eventDefinition(EVENT)!;

  /** An organization with `n` webhooks on one trigger. */
  async function organization(n: number) {
    const { organization, apiKey } = await service.ctx.orgs.create(`bench-${n}`);
    const headers = {
      [service.ctx.headers.orgId]: organization.id,
      [service.ctx.headers.apiKey]: apiKey,
      'content-type': 'application/json',
    };
    const call = async (path: string, body: unknown) => {
      const r = await service.fetch(
        new Request(`http://localhost${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
      );
      if (r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    for (let i = 0; i < n; i++) {
      const target = `https://hooks.test:${receivers.port}/o${organization.id.slice(-6)}/h${i}`;
      const created = await call('/organizations/webhooks', { name: `bench ${i}`, target_url: target });
      await call(`/organizations/webhooks/${created.result.id}/triggers`, {
        trigger_type: 'event',
        trigger_name: EVENT,
      });
    }
    const members = definition.sample({ orgId: organization.id, now: Date.now() });
    const publish = async () => {
      const t = now();
      const event = await service.ctx.events.publishByName(organization.id, EVENT, members);
      return { id: event.event_metadata.event_id, t };
    };
    return { publish };
  }
  return { service, organization };
}

/** Publish-to-receive latencies of the events (every webhook's receipt counts once). */
function latenciesOf(receivers: Receivers, sent: Array<{ id: string; t: number }>): number[] {
  return sent.flatMap((s) => (receivers.arrivals.get(s.id) ?? []).map((at) => at - s.t));
}

/** A bound a focused run did not measure: its fraction shows as '-'. */
export const UNMEASURED: Summary = { count: 0, perSecond: Number.NaN, p50: Number.NaN, p99: Number.NaN };

/**
 * Focused runs for profiling, from the command line: `--only=postgres-1,jetstream-100` runs those rows
 * alone (adapters pglite, postgres, jetstream; 1, 10 or 100 webhooks), `--no-bounds` skips the two bound
 * measurements, `--saturated` skips the paced and one-at-a-time phases, `--deliveries=N` sets the
 * deliveries of a saturated row.
 */
function cliFilter(argv: readonly string[]) {
  const only = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const wanted = only ? new Set(only.split(',').filter(Boolean)) : undefined;
  return {
    row: (adapter: string, n: number) => !wanted || wanted.has(`${adapter}-${n}`),
    adapter: (adapter: string) => !wanted || [...wanted].some((w) => w.startsWith(`${adapter}-`)),
    bounds: !argv.includes('--no-bounds'),
    saturatedOnly: argv.includes('--saturated'),
    deliveries:
      Number(argv.find((a) => a.startsWith('--deliveries='))?.slice('--deliveries='.length)) || undefined,
  };
}

export interface WebhookBenchOptions {
  databaseUrl?: string;
  natsUrl?: string;
  /** Deliveries per saturated row. */
  deliveries: number;
  /** Events published at once in the saturated rows. */
  inflight: number;
}

/**
 * End-to-end webhook delivery: events published through ctx.events, fanned out by the router, signed,
 * POSTed over TLS to receivers in another process, recorded. Deliveries per second and publish-to-receive
 * p50/p99 with 1, 10 and 100 webhooks on one trigger, on each bus adapter, next to the two bounds
 * measured in the same run: the delivery adapter's raw HTTPS POST rate and the bus's publish+consume rate.
 */
export async function benchWebhooks(o: WebhookBenchOptions): Promise<string> {
  const filter = cliFilter(process.argv);
  const receivers = await startReceivers();
  const lines: string[] = [];
  try {
    const https = filter.bounds ? await rawHttps(receivers.port, 256, 3000) : UNMEASURED;
    if (filter.bounds)
      lines.push(
        row([
          'bound: raw HTTPS POST (HttpDelivery), 256 in flight',
          fmtRate(https.perSecond),
          '',
          `${fmtMs(https.p50)} / ${fmtMs(https.p99)}`,
          '',
          '',
        ]),
      );
    const schema = `bench_wh_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
    const adapters: Array<Adapter & { key: string }> = [
      {
        key: 'pglite',
        name: 'pg-queue on PGlite (in memory)',
        env: {},
        storage: () => createPgliteStorage(),
        bus: async (storage) => createPgQueueBus({ storage, clock: systemClock, log }),
        migrations: [pgQueueMigrations],
        cleanup: async () => {},
      },
    ];
    if (o.databaseUrl) {
      adapters.push({
        key: 'postgres',
        name: 'pg-queue on Postgres',
        env: { DATABASE_URL: o.databaseUrl, DATABASE_SCHEMA: schema },
        storage: () => createPostgresStorage({ url: o.databaseUrl!, schema }),
        bus: async (storage) => createPgQueueBus({ storage, clock: systemClock, log }),
        migrations: [pgQueueMigrations],
        cleanup: async () => {
          const sql = postgres(o.databaseUrl!, { max: 1, onnotice: () => {} });
          await sql.unsafe(`drop schema if exists ${schema} cascade`);
          await sql.end();
        },
      });
    }
    if (o.databaseUrl && o.natsUrl) {
      const prefix = `BENCHWH${Date.now()}`;
      adapters.push({
        key: 'jetstream',
        name: 'JetStream (outbox on Postgres)',
        env: {
          DATABASE_URL: o.databaseUrl,
          DATABASE_SCHEMA: `${schema}_js`,
          NATS_URL: o.natsUrl,
          NATS_STREAM_PREFIX: prefix,
        },
        storage: () => createPostgresStorage({ url: o.databaseUrl!, schema: `${schema}_js` }),
        bus: (storage) =>
          createJetStreamBus({
            servers: [o.natsUrl!],
            streamPrefix: `${prefix}RAW`,
            storage,
            clock: systemClock,
            log,
          }),
        migrations: [natsOutboxMigrations],
        cleanup: async () => {
          const sql = postgres(o.databaseUrl!, { max: 1, onnotice: () => {} });
          await sql.unsafe(`drop schema if exists ${schema}_js cascade`);
          await sql.end();
          await deleteStreams(o.natsUrl!, prefix);
        },
      });
    }

    for (const a of adapters) {
      if (!filter.adapter(a.key)) continue;
      let bus = UNMEASURED;
      if (filter.bounds) {
        const rawStorage = await a.storage();
        await migrate(rawStorage, a.migrations);
        const rawBusInstance = await a.bus(rawStorage);
        bus = await rawBus(rawBusInstance, 10_000, 256);
        await rawBusInstance.close();
        await rawStorage.close();
      }
      const bound = Math.min(bus.perSecond, https.perSecond);
      if (filter.bounds)
        lines.push(
          row([
            `bound: ${a.name}, raw bus publish+consume, 256 in flight`,
            fmtRate(bus.perSecond),
            '',
            `${fmtMs(bus.p50)} / ${fmtMs(bus.p99)}`,
            '',
            '',
          ]),
        );

      const { service, organization } = await serviceFor(a, receivers);
      try {
        for (const n of [1, 10, 100]) {
          if (!filter.row(a.key, n)) continue;
          const org = await organization(n);
          // Warm-up: keys made, connections open, statements planned.
          const warm = await org.publish();
          await waitFor(() => (receivers.arrivals.get(warm.id)?.length ?? 0) >= n, 30_000, 'the warm-up');

          // Unsaturated: one event at a time, each waited for at every webhook.
          const single: Array<{ id: string; t: number }> = [];
          for (let i = 0; i < (filter.saturatedOnly ? 0 : Math.max(10, Math.ceil(200 / n))); i++) {
            const s = await org.publish();
            single.push(s);
            await waitFor(() => (receivers.arrivals.get(s.id)?.length ?? 0) >= n, 30_000, 'one event');
          }
          const idle = summarize(latenciesOf(receivers, single), 1);

          // Saturated: `deliveries` in all, events published `inflight` at a time.
          const events = Math.ceil((filter.deliveries ?? o.deliveries) / n);
          const sent: Array<{ id: string; t: number }> = [];
          const before = receivers.received();
          const t0 = now();
          let next = 0;
          await Promise.all(
            Array.from({ length: Math.min(o.inflight, events) }, async () => {
              while (next < events) {
                next++;
                sent.push(await org.publish());
              }
            }),
          );
          await waitFor(() => receivers.received() - before >= events * n, 180_000, 'the saturated run');
          const last = Math.max(...sent.flatMap((s) => receivers.arrivals.get(s.id) ?? []));
          const busy = summarize(latenciesOf(receivers, sent), last - t0);
          await Bun.sleep(200);

          // Paced: half the saturated rate for 3 s, events spread evenly: loaded, not saturated.
          const perSecond = busy.perSecond / 2 / n;
          const paced: Array<{ id: string; t: number }> = [];
          const publishes: Promise<unknown>[] = [];
          const start = performance.now();
          for (let i = 0; i < (filter.saturatedOnly ? 0 : Math.max(5, Math.round(perSecond * 3))); i++) {
            const due = start + (i * 1000) / perSecond;
            const wait = due - performance.now();
            if (wait > 1) await Bun.sleep(wait);
            publishes.push(org.publish().then((s) => paced.push(s)));
          }
          await Promise.all(publishes);
          await waitFor(
            () => paced.every((s) => (receivers.arrivals.get(s.id)?.length ?? 0) >= n),
            60_000,
            'the paced run',
          );
          const loaded = summarize(latenciesOf(receivers, paced), 1);
          lines.push(
            row([
              `${a.name}: ${n} webhook${n > 1 ? 's' : ''} on one trigger`,
              fmtRate(busy.perSecond),
              Number.isNaN(bound) ? '-' : `${(busy.perSecond / bound).toFixed(2)}`,
              `${fmtMs(busy.p50)} / ${fmtMs(busy.p99)}`,
              `${fmtMs(loaded.p50)} / ${fmtMs(loaded.p99)}`,
              `${fmtMs(idle.p50)} / ${fmtMs(idle.p99)}`,
            ]),
          );
        }
      } finally {
        await service.stop();
        await a.cleanup();
      }
    }
  } finally {
    receivers.stop();
  }
  return [
    `End to end: ctx.events.publish, router, delivery (ES256 JWT, HTTPS POST to a Bun.serve TLS receiver in another process), attempt recorded. ${o.deliveries.toLocaleString('en')} deliveries per saturated row, events published ${o.inflight} at a time; then 3 s paced at half the saturated rate, and one event at a time. Latency: publish start to arrival at the receiver (saturated latency is mostly queueing: events are published faster than they are delivered). The fraction is of the lower of the adapter's two bounds, measured in the same run.`,
    '',
    row([
      'path',
      'deliveries/s (saturated)',
      'fraction of bound',
      'saturated p50 / p99 ms',
      'at half that rate p50 / p99 ms',
      'one event at a time p50 / p99 ms',
    ]),
    row(['---', '---', '---', '---', '---', '---']),
    ...lines,
  ].join('\n');
}
