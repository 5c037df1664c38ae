import postgres from 'postgres';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { loadConfig } from '../../core/config.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { yieldToEventLoop } from '../../core/runtime.ts';
import { createService } from '../../entry/create-service.ts';
import { type AttributesOptions, attributes } from '../../plugins/attributes/index.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';

/** Five attributes of about 40 bytes each: a small settings bucket. */
const BODY = JSON.stringify(
  Object.fromEntries(
    Array.from({ length: 5 }, (_, i) => [`setting_${i}`, { on: true, note: 'x'.repeat(24) }]),
  ),
);
const VALUE = JSON.stringify({ on: true, note: 'x'.repeat(24) });

/** Runs `op` with `inflight` calls at a time for `ms`; op(worker) gets the index of its loop (shared with tokens.ts). */
export async function rate(
  op: (worker: number) => Promise<unknown>,
  inflight: number,
  ms: number,
): Promise<Summary> {
  const latencies: number[] = [];
  const end = performance.now() + ms;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inflight }, async (_, worker) => {
      while (performance.now() < end) {
        const s = performance.now();
        await op(worker);
        latencies.push(performance.now() - s);
        // A request arrives from the network: let the event loop turn between them, as a server does.
        await yieldToEventLoop();
      }
    }),
  );
  return summarize(latencies, performance.now() - t0);
}

/** A whole service in this process on the given storage, driven through `service.fetch`; no port opened. */
async function serviceOn(storage: Storage, workers: number, options: AttributesOptions = {}) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
  });
  const service = await createService(config, {
    overrides: { storage },
    definition: { plugins: [attributes(options)] },
  });
  // One organization per loop, so the loops write different buckets (their own row locks).
  const orgs = await Promise.all(
    Array.from({ length: workers }, (_, i) => service.ctx.orgs.create(`bench-${i}`)),
  );
  const names = service.ctx.headers;
  const request = (method: string, worker: number, body?: string) => {
    const org = orgs[worker]!;
    return service
      .fetch(
        new Request('http://localhost/organizations/attributes/end_user_read_write', {
          method,
          headers: {
            [names.orgId]: org.organization.id,
            [names.apiKey]: org.apiKey,
            // As a client sends it over HTTP: with its length (the server reads such a body whole).
            ...(body ? { 'content-type': 'application/json', 'content-length': String(body.length) } : {}),
          },
          ...(body ? { body } : {}),
        }),
      )
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`${method} answered ${res.status}`);
      });
  };
  return { service, request };
}

export interface AttributesBenchOptions {
  seconds: number;
  /** Requests in flight. */
  inflight: number;
  databaseUrl?: string;
}

/**
 * PUT and GET of one attribute bucket on PGlite and on Postgres, next to raw single-statement upserts
 * and selects on the same database in the same run.
 */
export async function benchAttributes(o: AttributesBenchOptions): Promise<string> {
  const ms = o.seconds * 1000;
  const lines: string[] = [];
  const add = (name: string, s: Summary, bound?: Summary) =>
    lines.push(
      row([
        name,
        fmtRate(s.perSecond),
        fmtMs(s.p50),
        fmtMs(s.p99),
        bound ? (s.perSecond / bound.perSecond).toFixed(2) : '',
      ]),
    );
  const table = `create table raw_attributes (org_id uuid, bucket text, key text, value text,
    primary key (org_id, bucket, key))`;
  const orgIds = Array.from({ length: o.inflight }, () => crypto.randomUUID());

  // PGlite: one connection, so the raw bound runs one statement at a time.
  const raw = await createPgliteStorage();
  await raw.client.exec(table);
  const liteUpsert = await rate(
    (w) =>
      raw.client.query(
        `insert into raw_attributes values ($1, 'b', 'k', $2) on conflict (org_id, bucket, key) do update set value = excluded.value`,
        [orgIds[w], VALUE],
      ),
    1,
    ms,
  );
  add('bound: raw PGlite INSERT .. ON CONFLICT, one at a time', liteUpsert);
  const liteSelect = await rate(
    (w) =>
      raw.client.query(`select key, value from raw_attributes where org_id = $1 and bucket = 'b'`, [
        orgIds[w],
      ]),
    1,
    ms,
  );
  add('bound: raw PGlite SELECT by key, one at a time', liteSelect);
  await raw.close();

  const lite = await serviceOn(await createPgliteStorage(), o.inflight);
  add(
    `PUT on PGlite, ${o.inflight} in flight, a bucket each`,
    await rate((w) => lite.request('PUT', w, BODY), o.inflight, ms),
    liteUpsert,
  );
  add(
    `GET on PGlite, ${o.inflight} in flight`,
    await rate((w) => lite.request('GET', w), o.inflight, ms),
    liteSelect,
  );
  await lite.service.stop();

  if (o.databaseUrl) {
    const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const sql = postgres(o.databaseUrl, { max: o.inflight, onnotice: () => {} });
    await sql.unsafe(`create schema ${schema}`);
    await sql.unsafe(table.replace('raw_attributes', `${schema}.raw_attributes`));
    const upsert = (w: number) =>
      sql`insert into ${sql(schema)}.raw_attributes values (${orgIds[w]!}, 'b', 'k', ${VALUE})
        on conflict (org_id, bucket, key) do update set value = excluded.value`;
    const select = (w: number) =>
      sql`select key, value from ${sql(schema)}.raw_attributes where org_id = ${orgIds[w]!} and bucket = 'b'`;
    add('bound: raw postgres.js INSERT .. ON CONFLICT, 1 connection', await rate(upsert, 1, ms));
    const pgUpsert = await rate(upsert, o.inflight, ms);
    add(`bound: raw postgres.js INSERT .. ON CONFLICT, ${o.inflight} connections`, pgUpsert);
    const pgSelect = await rate(select, o.inflight, ms);
    add(`bound: raw postgres.js SELECT by key, ${o.inflight} connections`, pgSelect);
    // Not the aim's bound, but what a PUT asks of Postgres, as raw SQL one request at a time: the
    // bucket's row upserted with its five values (of a sealed value's length) as one JSON object.
    await sql.unsafe(`create table ${schema}.raw_buckets (org_id uuid, name text, version int,
      attributes jsonb, primary key (org_id, name))`);
    const bucketDoc = JSON.stringify(
      Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`setting_${i}`, 'x'.repeat(150)])),
    );
    const bucketUpsert = (w: number) =>
      sql`insert into ${sql(schema)}.raw_buckets values (${orgIds[w]!}, 'b', 1, ${bucketDoc}::text::jsonb)
        on conflict (org_id, name) do update set attributes = excluded.attributes, version = raw_buckets.version + 1`;
    add(
      `reference: raw postgres.js, a PUT's SQL (upsert the bucket's row with its five sealed values), ${o.inflight} connections`,
      await rate(bucketUpsert, o.inflight, ms),
    );
    // The bounds' pool closes before the service opens its own: the database is shared, and both at
    // once could pass its connection limit.
    await sql.end();

    const pg = await serviceOn(
      await createPostgresStorage({ url: o.databaseUrl, schema, max: o.inflight }),
      o.inflight,
    );
    add(
      `PUT on Postgres, ${o.inflight} in flight, a bucket each`,
      await rate((w) => pg.request('PUT', w, BODY), o.inflight, ms),
      pgUpsert,
    );
    add(
      `PUT on Postgres, ${o.inflight} in flight, all to one bucket`,
      await rate(() => pg.request('PUT', 0, BODY), o.inflight, ms),
      pgUpsert,
    );
    // A merge reads what the bucket holds to add to it and count it: one transaction a batch.
    add(
      `PATCH on Postgres, ${o.inflight} in flight, a bucket each`,
      await rate((w) => pg.request('PATCH', w, BODY), o.inflight, ms),
      pgUpsert,
    );
    add(
      `GET on Postgres, ${o.inflight} in flight`,
      await rate((w) => pg.request('GET', w), o.inflight, ms),
      pgSelect,
    );
    add(
      'PUT on Postgres, one at a time (unsaturated latency)',
      await rate(() => pg.request('PUT', 0, BODY), 1, ms),
    );
    await pg.service.stop();

    // The same GET with no opened values kept: every value decrypted on every read.
    const cold = await serviceOn(
      await createPostgresStorage({ url: o.databaseUrl, schema, max: o.inflight }),
      o.inflight,
      { openedValuesBytes: 0 },
    );
    await rate((w) => cold.request('PUT', w, BODY), o.inflight, 500);
    add(
      `GET on Postgres, ${o.inflight} in flight, every value decrypted (openedValuesBytes: 0)`,
      await rate((w) => cold.request('GET', w), o.inflight, ms),
      pgSelect,
    );
    await cold.service.stop();
    const admin = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop schema ${schema} cascade`);
    await admin.end();
  }
  return [
    `A PUT replaces a bucket of five attributes (${BODY.length} bytes): auth, validation, five AES-GCM seals, one upsert of the bucket's row (its attributes a JSON object of name to sealed value; concurrent PUTs share the statement); a GET reads the row and opens them (a value read or written lately is kept opened in memory, 8 MiB by default: the last row turns that off). Requests go through \`service.fetch\` in this process, ${o.seconds} s per row; bounds are single statements on the same database in the same run.`,
    '',
    row(['path', 'operations/s', 'p50 ms', 'p99 ms', 'fraction of bound']),
    row(['---', '---', '---', '---', '---']),
    ...lines,
  ].join('\n');
}
