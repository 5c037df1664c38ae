/**
 * Deliveries per second of the real server: `bun entry/bun.ts` as 1, 2 and 3 processes (WORKERS) on one
 * Postgres, on each bus (JetStream with NATS_URL, the Postgres-backed queue without), with 1 and with 100
 * webhooks on one trigger. Events are published over HTTP (POST /test-events) and delivered over TLS to
 * the receivers of the webhooks section, in another process.
 */
import postgres from 'postgres';
import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createPgQueueBus, pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger } from '../../core/log.ts';
import { deliveryEnv } from '../../test/helpers/webhooks.ts';
import { cpuMeter, type GroupCpu, processesNamed } from './cpu.ts';
import { IMAGE_RUNTIME_ENV } from './processes.ts';
import { type ServerProcesses, startServerProcesses } from './server-processes.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';
import { deleteStreams } from './streams.ts';
import {
  burst,
  type Credentials,
  type Org,
  orgApi,
  organization,
  PER_REQUEST,
  paced,
  type Sent,
} from './test-events.ts';
import { type Receivers, rawBus, rawHttps, startReceivers, UNMEASURED, waitFor } from './webhooks.ts';

const now = () => performance.timeOrigin + performance.now();

type BusKey = 'jetstream' | 'pg-queue';
/** The aims, with one webhook: deliveries a second, and p99 at half that rate. */
const AIMS: Record<BusKey, number> = { jetstream: 5000, 'pg-queue': 1500 };
const AIM_P99_MS = 50;

export interface DeliveriesBenchOptions {
  databaseUrl: string;
  /** JetStream's servers; without, only the Postgres-backed queue is measured. */
  natsUrl?: string;
  /** Deliveries of a saturated run (events × webhooks). */
  deliveries: number;
  /** POST /test-events requests in flight in a saturated run. */
  inflight: number;
  /** Paced run length. */
  pacedSeconds: number;
}

/**
 * Focused runs from the command line: `--only=jetstream-1-2,pg-queue-100-3` runs those rows alone (bus,
 * webhooks, processes), `--no-bounds` skips the bounds, `--deliveries=N` sets a saturated run's size,
 * `--cpu-prof=DIR` has every server process write a CPU profile into DIR when it stops.
 */
function cliFilter(argv: readonly string[]) {
  const only = argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
  const wanted = only ? only.split(',').filter(Boolean) : undefined;
  return {
    row: (bus: BusKey, n: number, workers: number) => !wanted || wanted.includes(`${bus}-${n}-${workers}`),
    bus: (bus: BusKey) => !wanted || wanted.some((w) => w.startsWith(`${bus}-`)),
    bounds: !argv.includes('--no-bounds'),
    deliveries:
      Number(argv.find((a) => a.startsWith('--deliveries='))?.slice('--deliveries='.length)) || undefined,
    cpuProfDir: argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length),
  };
}

const latenciesOf = (receivers: Receivers, sent: Sent[]): number[] =>
  sent.flatMap((s) => (receivers.arrivals.get(s.id) ?? []).map((at) => at - s.t));

/**
 * Waits for every event of `run` at each of the `n` webhooks: first by the receivers' count (cheap to poll:
 * the bench shares the cores with the servers), then event by event, once, in case a retry counted twice.
 */
async function arrived(receivers: Receivers, run: { before: number; sent: Sent[] }, n: number, what: string) {
  await waitFor(() => receivers.received() - run.before >= run.sent.length * n, 300_000, what);
  await waitFor(() => run.sent.every((s) => (receivers.arrivals.get(s.id)?.length ?? 0) >= n), 60_000, what);
}

const pct = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(0));

/**
 * The CPU column: each process's share of a core, how long the workers waited for one, how busy the
 * machine was (percent of all its cores) and what of it none of these processes used (percent of a core).
 */
function cpuCell(r: RowResult): string {
  const g = r.cpu.groups;
  return [
    `workers ${r.cpuByWorker.map((w) => pct(w.cpu)).join(' / ')} (waiting for a core ${r.cpuByWorker.map((w) => pct(w.waited)).join(' / ')})`,
    `Postgres ${pct(g.postgres?.cpu)}`,
    ...(g.nats ? [`NATS ${pct(g.nats.cpu)}`] : []),
    `receiver ${pct(g.receiver?.cpu)}`,
    `bench ${pct(g.bench?.cpu)}`,
    `machine ${pct(r.cpu.machine)} % of ${navigator.hardwareConcurrency} cores busy`,
    // What the machine did besides: other work on a shared machine, the kernel's own.
    `others ${pct(Math.max(0, r.cpu.machine * navigator.hardwareConcurrency - Object.values(g).reduce((a, x) => a + x.cpu, 0)))}`,
  ].join(', ');
}

interface RowResult {
  rate: number;
  busy: Summary;
  loaded: Summary;
  atHalfAim: Summary | undefined;
  byWorker: number[];
  cpu: ReturnType<ReturnType<typeof cpuMeter>>;
  cpuByWorker: GroupCpu[];
}

/** One row: warm-up, the saturated run (CPU measured), the paced run at half its rate. */
async function measureRow(
  o: DeliveriesBenchOptions & { deliveries: number },
  servers: ServerProcesses,
  org: Org,
  n: number,
  receivers: Receivers,
  natsPort: string | undefined,
  /** Deliveries a second of a paced run at half the aim, for the rows the aim speaks of. */
  halfAim?: number,
): Promise<RowResult> {
  // Warm-up: as many deliveries as the run, so keys, connections and prepared statements exist in every
  // worker and the JIT has compiled the hot path: a server runs warm. With a tenth of the run, Bun's JIT
  // threads still took 13 % of the machine in the measured burst, and the one-webhook JetStream row ran
  // about a tenth slower (4.3k against 4.8k to 4.9k deliveries/s, 2026-11-28).
  const warm = { before: receivers.received(), sent: [] as Sent[] };
  warm.sent = await burst(org, Math.ceil(o.deliveries / n), o.inflight);
  await arrived(receivers, warm, n, 'the warm-up');

  const workerPids = servers.pids();
  const groups: Record<string, () => number[]> = {
    postgres: () => processesNamed('postgres').map((p) => p.pid),
    receiver: () => [receivers.pid],
    bench: () => [process.pid],
  };
  for (const [i, pid] of workerPids.entries()) groups[`worker ${i}`] = () => [pid];
  if (natsPort)
    groups.nats = () =>
      processesNamed('nats-server')
        .filter((p) => p.args.some((a) => a === natsPort || a.endsWith(`:${natsPort}`)))
        .map((p) => p.pid);
  const deliveredBefore = await servers.delivered();
  const meter = cpuMeter(groups);

  // Saturated: `deliveries` in all, from the first request sent to the last arrival.
  const events = Math.ceil(o.deliveries / n);
  const t0 = now();
  const before = receivers.received();
  const sent = await burst(org, events, o.inflight);
  await arrived(receivers, { before, sent }, n, 'the saturated run');
  const cpu = meter();
  const last = Math.max(...sent.flatMap((s) => receivers.arrivals.get(s.id) ?? []));
  const busy = summarize(latenciesOf(receivers, sent), last - t0);
  const deliveredAfter = await servers.delivered();
  const byWorker = deliveredAfter.map((d, i) => d - (deliveredBefore[i] ?? 0));
  await Bun.sleep(300);

  // Paced: half the saturated rate, loaded but not saturated.
  const pacedBefore = receivers.received();
  const pacedSent = await paced(org, busy.perSecond / 2 / n, o.pacedSeconds);
  await arrived(receivers, { before: pacedBefore, sent: pacedSent }, n, 'the paced run');
  const loaded = summarize(latenciesOf(receivers, pacedSent), 1);

  // Paced at half the aim's rate (one webhook): the latency the aim speaks of, whatever the saturated rate.
  let atHalfAim: Summary | undefined;
  if (halfAim !== undefined) {
    await Bun.sleep(300);
    const aimBefore = receivers.received();
    const aimSent = await paced(org, halfAim / n, o.pacedSeconds);
    await arrived(receivers, { before: aimBefore, sent: aimSent }, n, 'the run at half the aim');
    atHalfAim = summarize(latenciesOf(receivers, aimSent), 1);
  }
  receivers.arrivals.clear();
  return {
    rate: busy.perSecond,
    busy,
    loaded,
    atHalfAim,
    byWorker,
    cpu,
    cpuByWorker: workerPids.map((_, i) => cpu.groups[`worker ${i}`]!),
  };
}

/**
 * End-to-end webhook deliveries of the real entry on Postgres, 1 to 3 processes, both buses, next to the
 * bounds measured in the same run (raw HTTPS POST, raw bus publish+consume, each in this one process).
 */
export async function benchDeliveries(options: DeliveriesBenchOptions): Promise<string> {
  const filter = cliFilter(process.argv);
  const o = { ...options, deliveries: filter.deliveries ?? options.deliveries };
  const log = createLogger('silent');
  const receivers = await startReceivers();
  const lines: string[] = [];
  const buses: BusKey[] = o.natsUrl ? ['jetstream', 'pg-queue'] : ['pg-queue'];
  const tag = `${Date.now().toString(36)}${process.pid}`;
  const admin = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
  // Interrupted (Ctrl-C), the servers and the receiver exit with this process (their IPC channels
  // close); the bus's schemas and streams are dropped first.
  let cleanup: (() => Promise<void>) | undefined;
  const interrupted = async () => {
    await cleanup?.();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const natsPort = o.natsUrl ? new URL(o.natsUrl).port || '4222' : undefined;
  const bound = (what: string, s: Summary) =>
    row([`bound: ${what}`, fmtRate(s.perSecond), '', '', `${fmtMs(s.p50)} / ${fmtMs(s.p99)}`, '', '', '']);
  try {
    const https = filter.bounds ? await rawHttps(receivers.port, 256, 3000) : UNMEASURED;
    if (filter.bounds) lines.push(bound('raw HTTPS POST (HttpDelivery), 256 in flight, one process', https));

    for (const bus of buses) {
      if (!filter.bus(bus)) continue;
      const schema = `bench_dl_${tag}_${bus === 'jetstream' ? 'js' : 'pq'}`;
      const prefix = `BENCHDL${tag}${bus === 'jetstream' ? 'JS' : 'PQ'}`.toUpperCase();
      const name = bus === 'jetstream' ? 'JetStream' : 'pg-queue';
      cleanup = async () => {
        await admin.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {});
        await admin.unsafe(`drop schema if exists ${schema}_raw cascade`).catch(() => {});
        if (bus === 'jetstream') await deleteStreams(o.natsUrl!, prefix).catch(() => {});
      };
      try {
        let busBound = UNMEASURED;
        if (filter.bounds) {
          const storage = await createPostgresStorage({ url: o.databaseUrl, schema: `${schema}_raw` });
          await migrate(storage, [bus === 'jetstream' ? natsOutboxMigrations : pgQueueMigrations]);
          const instance =
            bus === 'jetstream'
              ? await createJetStreamBus({
                  servers: [o.natsUrl!],
                  streamPrefix: `${prefix}RAW`,
                  storage,
                  clock: systemClock,
                  log,
                })
              : createPgQueueBus({ storage, clock: systemClock, log });
          busBound = await rawBus(instance, 10_000, 256);
          await instance.close();
          await storage.close();
          lines.push(
            bound(`${name} on Postgres, raw bus publish+consume, 256 in flight, one process`, busBound),
          );
        }
        const lower = Math.min(busBound.perSecond, https.perSecond);

        const env: Record<string, string> = {
          ...(deliveryEnv() as Record<string, string>),
          DATABASE_URL: o.databaseUrl,
          DATABASE_SCHEMA: schema,
          NATS_URL: bus === 'jetstream' ? o.natsUrl! : '',
          NATS_STREAM_PREFIX: prefix,
          MASTER_KEY: `bench:${btoa('d'.repeat(32))}`,
          NODE_ENV: 'development',
          LOG_LEVEL: 'warn',
          PLUGINS: 'webhooks',
          // The bench publishes thousands of test events a second; the spec's limit is 10 a minute.
          TEST_EVENTS_RATE_LIMIT: '1000000/1000000',
        };
        const orgs = new Map<number, Credentials>();
        for (const workers of [1, 2, 3]) {
          const counts = [1, 100].filter((n) => filter.row(bus, n, workers));
          if (counts.length === 0) continue;
          console.error(`  ${name}, ${workers} process(es) ...`);
          const servers = await startServerProcesses(env, workers, filter.cpuProfDir);
          try {
            // Organizations made once per bus (the next servers find them in the database); a new
            // webhook reaches every process's router cache within 5 s.
            const missing = counts.filter((n) => !orgs.has(n));
            for (const n of missing) {
              const org = organization(env, `Bench ${n}`);
              await orgApi(servers.base, org).webhooks(n, receivers.port);
              orgs.set(n, org);
            }
            if (missing.length > 0) await Bun.sleep(6000);
            for (const n of counts) {
              const r = await measureRow(
                o,
                servers,
                orgApi(servers.base, orgs.get(n)!),
                n,
                receivers,
                bus === 'jetstream' ? natsPort : undefined,
                n === 1 ? AIMS[bus] / 2 : undefined,
              );
              const aim =
                n === 1
                  ? `≥ ${AIMS[bus].toLocaleString('en')}: ${r.rate >= AIMS[bus] ? 'met' : 'not met'}; p99 at ${fmtRate(AIMS[bus] / 2)}/s ${fmtMs(r.atHalfAim?.p99 ?? Number.NaN)} ms (p50 ${fmtMs(r.atHalfAim?.p50 ?? Number.NaN)}), < ${AIM_P99_MS} ms: ${(r.atHalfAim?.p99 ?? Number.POSITIVE_INFINITY) < AIM_P99_MS ? 'met' : 'not met'}`
                  : '';
              const total = r.byWorker.reduce((a, b) => a + b, 0);
              const cpu = cpuCell(r);
              lines.push(
                row([
                  `${name}, ${workers} process${workers > 1 ? 'es' : ''}, ${n} webhook${n > 1 ? 's' : ''}`,
                  fmtRate(r.rate),
                  Number.isNaN(lower) ? '-' : (r.rate / lower).toFixed(2),
                  aim,
                  `${fmtMs(r.busy.p50)} / ${fmtMs(r.busy.p99)}`,
                  `${fmtMs(r.loaded.p50)} / ${fmtMs(r.loaded.p99)}`,
                  total > 0 ? r.byWorker.map((d) => `${Math.round((d / total) * 100)}`).join(' / ') : '-',
                  cpu,
                ]),
              );
              console.error(`  ${lines.at(-1)}`);
            }
          } finally {
            await servers.stop();
          }
        }
      } finally {
        await cleanup();
        cleanup = undefined;
      }
    }
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
    receivers.stop();
    await admin.end();
  }
  return [
    `The real entry (\`bun entry/bun.ts\`, WORKERS=1, 2 or 3 on one port, LOG_LEVEL=warn, metrics on, MIMALLOC_PURGE_DELAY=${IMAGE_RUNTIME_ENV.MIMALLOC_PURGE_DELAY} as in the container image) on Postgres, events published by POST /test-events (${PER_REQUEST} a request, ${o.inflight} requests in flight), each delivery signed and POSTed over TLS to a Bun.serve receiver in another process. Saturated: ${o.deliveries.toLocaleString('en')} deliveries after a warm-up of as many, deliveries/s from the first request sent to the last arrival; then ${o.pacedSeconds} s paced at half that rate and, with one webhook, ${o.pacedSeconds} s paced at half the aim (the aim's p99). Latency: from the request that published the event being sent to the arrival. The fraction is of the lower bound, both bounds measured in the same run in this one process. Aims (one webhook): ≥ ${AIMS.jetstream.toLocaleString('en')} deliveries/s on JetStream, ≥ ${AIMS['pg-queue'].toLocaleString('en')} on pg-queue, p99 under ${AIM_P99_MS} ms at half that rate. CPU: percent of one core during the saturated run, read from /proc; Postgres and NATS are every process of theirs on the machine, on the same ${navigator.hardwareConcurrency} cores as everything else; waiting for a core: the time a worker's main thread was ready to run but had no core; others: the machine's busy time outside the processes listed (other work on the machine, the kernel).`,
    '',
    row([
      'path',
      'deliveries/s (saturated)',
      'fraction of bound',
      'aim',
      'saturated p50 / p99 ms',
      'at half that rate p50 / p99 ms',
      'deliveries by worker %',
      'CPU % of a core (saturated)',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
    ...lines,
  ].join('\n');
}
