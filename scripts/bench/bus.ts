import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import postgres from 'postgres';
import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createPgQueueBus, pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger } from '../../core/log.ts';
import { ack, type EventBus } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';

const log = createLogger('warn');
const PAYLOAD = 'x'.repeat(1000);

/** Runs `op` with `inflight` calls at a time for `ms`; returns completions per second. */
async function rate(op: () => Promise<unknown>, inflight: number, ms: number): Promise<Summary> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        await op();
        latencies.push(performance.now() - s);
      }
    }),
  );
  return summarize(latencies, performance.now() - t0);
}

/** Publishes n messages (inflight at a time) to a consuming bus; throughput and publish-to-handle latency. */
async function throughput(bus: EventBus, n: number, inflight: number): Promise<Summary> {
  const topic = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const latencies: number[] = [];
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  const sub = bus.consume<{ t: number }>(
    topic,
    async (m) => {
      latencies.push(performance.now() - m.payload.t);
      if (latencies.length === n) done();
      return ack();
    },
    { concurrency: 64 },
  );
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (next < n) {
        next++;
        await bus.publish(topic, [{ payload: { t: performance.now(), p: PAYLOAD } }]);
      }
    }),
  );
  await finished;
  const elapsed = performance.now() - t0;
  await sub.stop();
  return summarize(latencies, elapsed);
}

/** One message at a time: publish, wait until handled; the unsaturated latency. */
async function unsaturated(bus: EventBus, n: number): Promise<Summary> {
  const topic = `bench-${crypto.randomUUID().slice(0, 8)}`;
  const latencies: number[] = [];
  let resolve: () => void = () => {};
  const sub = bus.consume<{ t: number }>(topic, async (m) => {
    latencies.push(performance.now() - m.payload.t);
    resolve();
    return ack();
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const handled = new Promise<void>((r) => {
      resolve = r;
    });
    await bus.publish(topic, [{ payload: { t: performance.now(), p: PAYLOAD } }]);
    await handled;
  }
  const elapsed = performance.now() - t0;
  await sub.stop();
  return summarize(latencies, elapsed);
}

export interface BusBenchOptions {
  n: number;
  inflight: number;
  databaseUrl?: string;
  natsUrl?: string;
}

/** Bus publish+consume on each adapter, next to raw postgres.js INSERT and raw JetStream publish-with-ack. */
export async function benchBus(o: BusBenchOptions): Promise<string> {
  const lines: string[] = [];
  const add = (name: string, s: Summary, bound?: number) =>
    lines.push(
      row([
        name,
        fmtRate(s.perSecond),
        fmtMs(s.p50),
        fmtMs(s.p99),
        bound ? (s.perSecond / bound).toFixed(2) : '',
      ]),
    );
  const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
  let rawInsert32 = 0;
  let rawPublish256 = 0;

  if (o.databaseUrl) {
    const sql = postgres(o.databaseUrl, { max: 32, onnotice: () => {} });
    await sql.unsafe(
      `create schema ${schema}; create table ${schema}.raw (id bigserial primary key, payload jsonb not null)`,
    );
    const insert = () =>
      sql`insert into ${sql(schema)}.raw (payload) values (${sql.json({ p: PAYLOAD })}) returning id`;
    add('bound: raw postgres.js INSERT, 1 connection', await rate(insert, 1, 2000));
    const many = await rate(insert, 32, 2000);
    rawInsert32 = many.perSecond;
    add('bound: raw postgres.js INSERT, 32 connections', many);
    await sql.end();
  }
  if (o.natsUrl) {
    const nc = await connect({ servers: o.natsUrl });
    const jsm = await jetstreamManager(nc);
    const stream = `BENCHRAW_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`;
    await jsm.streams.add({ name: stream, subjects: [`${stream}.x`] });
    const js = jetstream(nc);
    const data = new TextEncoder().encode(JSON.stringify({ p: PAYLOAD }));
    const publish = () => js.publish(`${stream}.x`, data);
    add('bound: raw JetStream publish with ack, 1 in flight', await rate(publish, 1, 2000));
    const many = await rate(publish, 256, 2000);
    rawPublish256 = many.perSecond;
    add('bound: raw JetStream publish with ack, 256 in flight', many);
    await jsm.streams.delete(stream);
    await nc.drain();
  }

  const lite = await createPgliteStorage();
  await lite.client.exec('create table raw (id bigserial primary key, payload jsonb not null)');
  const liteJson = JSON.stringify({ p: PAYLOAD });
  const liteInsert = await rate(
    () => lite.client.query('insert into raw (payload) values ($1) returning id', [liteJson]),
    1,
    2000,
  );
  add('bound: raw PGlite INSERT, one at a time', liteInsert);
  await lite.close();

  const adapters: Array<{
    name: string;
    open: () => Promise<{ bus: EventBus; storage: Storage }>;
    bound: number;
  }> = [
    {
      name: 'pg-queue on PGlite (in memory)',
      bound: liteInsert.perSecond,
      open: async () => {
        const storage = await createPgliteStorage();
        await migrate(storage, [pgQueueMigrations]);
        return { storage, bus: createPgQueueBus({ storage, clock: systemClock, log }) };
      },
    },
  ];
  if (o.databaseUrl) {
    adapters.push({
      name: 'pg-queue on Postgres',
      bound: rawInsert32,
      open: async () => {
        const storage = await createPostgresStorage({ url: o.databaseUrl!, schema, max: 32 });
        await migrate(storage, [pgQueueMigrations]);
        return { storage, bus: createPgQueueBus({ storage, clock: systemClock, log }) };
      },
    });
  }
  if (o.natsUrl && o.databaseUrl) {
    adapters.push({
      name: 'JetStream (outbox on Postgres)',
      bound: rawPublish256,
      open: async () => {
        const storage = await createPostgresStorage({ url: o.databaseUrl!, schema, max: 32 });
        await migrate(storage, [natsOutboxMigrations]);
        return {
          storage,
          bus: await createJetStreamBus({
            servers: [o.natsUrl!],
            streamPrefix: `BENCH${Date.now()}`,
            storage,
            clock: systemClock,
            log,
          }),
        };
      },
    });
  }
  for (const a of adapters) {
    const { bus, storage } = await a.open();
    add(
      `${a.name}: publish+consume, ${o.inflight} publishes in flight`,
      await throughput(bus, o.n, o.inflight),
      a.bound || undefined,
    );
    add(`${a.name}: one at a time (unsaturated latency)`, await unsaturated(bus, 300));
    await bus.close();
    await storage.close();
  }
  if (o.databaseUrl) {
    const sql = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema ${schema} cascade`);
    await sql.end();
  }
  return [
    `${o.n} messages of 1 KiB per throughput row; latency is publish start to handler start. Bounds measured in the same run.`,
    '',
    row(['path', 'messages/s', 'p50 ms', 'p99 ms', 'fraction of bound']),
    row(['---', '---', '---', '---', '---']),
    ...lines,
  ].join('\n');
}
