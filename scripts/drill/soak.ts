/**
 * The soak drill: the real entry (embedded database, or DATABASE_URL) under a mixed load for `minutes`:
 * OAuth client_credentials grants, attribute PUTs and GETs, persons created, and test events delivered to
 * an HTTPS webhook in this process. Each minute it records the server's RSS and the p99 of that minute;
 * the verdict line gives RSS at start and end, p99 of the first and last minute (the drift), requests,
 * errors, and events published against delivered.
 *
 *   npm run drill:soak -- [--minutes 10] [--concurrency 16]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { deliveryEnv } from '../../test/helpers/webhooks.ts';
import { organization } from '../bench/test-events.ts';
import { freePort } from '../free-port.ts';
import { cliArg } from './cli-arg.ts';
import { startDrillReceiver } from './receiver.ts';

const ROOT = join(import.meta.dir, '..', '..');

export interface SoakVerdict {
  minutes: number;
  requests: number;
  errors: number;
  rssStartMb: number;
  rssEndMb: number;
  p99FirstMs: number;
  p99LastMs: number;
  perMinute: { rssMb: number; p99Ms: number; requests: number }[];
  eventsPublished: number;
  eventsDelivered: number;
}

const rssMb = (pid: number) =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024);

const p99 = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]! * 10) / 10;
};

export async function soakDrill(o: {
  minutes: number;
  concurrency?: number;
  log?: (l: string) => void;
}): Promise<SoakVerdict> {
  const log = o.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'drill-soak-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const delivered = new Set<string>();
  const receiver = await startDrillReceiver({
    onRequest: (body) =>
      delivered.add(JSON.parse(Buffer.from(body.split('.')[1] ?? '', 'base64url').toString()).sub),
  });
  // On Postgres: a schema of its own, dropped afterwards, and the organization made with the CLI (the
  // development organization is printed on the embedded database only).
  const databaseUrl = process.env.DATABASE_URL;
  const schema = `soak_${Date.now().toString(36)}${process.pid}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ...(deliveryEnv() as Record<string, string>),
    PORT: String(port),
    DATA_DIR: dir,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    TEST_EVENTS_RATE_LIMIT: '1000000/1000000',
    ...(databaseUrl
      ? { DATABASE_SCHEMA: schema, MASTER_KEY: `soak:${btoa('s'.repeat(32))}` }
      : { DATABASE_URL: '', MASTER_KEY: '' }),
  };
  const proc = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
    cwd: ROOT,
    env,
    stdout: 'ignore',
    stderr: 'pipe',
  });
  try {
    let err = '';
    const reader = proc.stderr.getReader();
    void (async () => {
      for (let c = await reader.read(); !c.done; c = await reader.read())
        err += new TextDecoder().decode(c.value);
    })();
    const readyBy = Date.now() + 120_000;
    for (;;) {
      const up = databaseUrl
        ? await fetch(`${base}/healthz`).then(
            (r) => r.ok,
            () => false,
          )
        : /API-Key: (\S+)/.test(err);
      if (up) break;
      if (proc.exitCode !== null || Date.now() > readyBy)
        throw new Error(`the server stopped or did not become ready:\n${err}`);
      await Bun.sleep(50);
    }
    let org = {
      organization_id: /OrgID: (\S+)/.exec(err)?.[1] ?? '',
      api_key: /API-Key: (\S+)/.exec(err)?.[1] ?? '',
    };
    if (databaseUrl) org = organization(env, 'Soak');
    const headers = {
      'Service-OrgID': org.organization_id,
      'Service-API-Key': org.api_key,
      'content-type': 'application/json',
    };
    const call = async (method: string, path: string, body?: unknown, extra?: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...headers, ...extra },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
      return { status: res.status, text: await res.text() };
    };
    const client = JSON.parse(
      (
        await call('POST', '/oauth2/clients', {
          client_name: 'soak',
          scopes: ['read'],
          grant_types: ['client_credentials'],
        })
      ).text,
    ).result as { client_id: string; client_secret: string };
    const webhook = JSON.parse(
      (
        await call('POST', '/organizations/webhooks', {
          name: 'soak',
          target_url: receiver.url('/soak'),
          timeout: '5s',
        })
      ).text,
    ).result as { id: string };
    await call('POST', `/organizations/webhooks/${webhook.id}/triggers`, {
      trigger_type: 'event',
      trigger_name: 'PersonIdentified_v1',
    });
    const bucket = await call('POST', '/organizations/attribute-buckets', { name: 'soak' });
    if (bucket.status !== 201) throw new Error(`bucket create answered ${bucket.status} ${bucket.text}`);
    const basic = `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`;
    const published = new Set<string>();
    let n = 0;
    const operations: (() => Promise<number>)[] = [
      async () =>
        (
          await call('POST', '/oauth2/tokens', 'grant_type=client_credentials&scope=read', {
            authorization: basic,
            'content-type': 'application/x-www-form-urlencoded',
          })
        ).status,
      async () => (await call('PUT', '/organizations/attributes/soak', { [`k${n % 50}`]: { n } })).status,
      async () => (await call('GET', '/organizations/attributes/soak')).status,
      async () =>
        (
          await call('POST', '/persons', {
            handles: [{ type: 'email_address', value: `soak-${n}-${process.pid}@example.com` }],
          })
        ).status,
      async () => {
        const r = await call('POST', '/test-events', [{ event_name: 'PersonIdentified_v1', count: 1 }]);
        if (r.status === 201)
          for (const e of JSON.parse(r.text).result) published.add(e.event_metadata.event_id);
        return r.status;
      },
    ];
    const perMinute: SoakVerdict['perMinute'] = [];
    let latencies: number[] = [];
    let requests = 0;
    let errors = 0;
    const rssStart = rssMb(proc.pid);
    const end = Date.now() + o.minutes * 60_000;
    let minuteEnd = Date.now() + 60_000;
    const sampler = setInterval(() => {
      if (Date.now() < minuteEnd) return;
      minuteEnd += 60_000;
      perMinute.push({ rssMb: rssMb(proc.pid), p99Ms: p99(latencies), requests: latencies.length });
      log(`minute ${perMinute.length}: ${JSON.stringify(perMinute.at(-1))}`);
      latencies = [];
    }, 250);
    await Promise.all(
      Array.from({ length: o.concurrency ?? 16 }, async () => {
        while (Date.now() < end) {
          const which = n++ % operations.length;
          const op = operations[which]!;
          const t0 = performance.now();
          const status = await op().catch(() => 0);
          latencies.push(performance.now() - t0);
          requests++;
          if (status === 0 || status >= 400) {
            errors++;
            if (errors <= 5) log(`operation ${which} answered ${status}`);
          }
        }
      }),
    );
    clearInterval(sampler);
    if (latencies.length)
      perMinute.push({ rssMb: rssMb(proc.pid), p99Ms: p99(latencies), requests: latencies.length });
    // The deliveries of the last events, given a little time to arrive.
    const deadline = Date.now() + 60_000;
    while ([...published].some((id) => !delivered.has(id)) && Date.now() < deadline) await Bun.sleep(100);
    return {
      minutes: o.minutes,
      requests,
      errors,
      rssStartMb: rssStart,
      rssEndMb: rssMb(proc.pid),
      p99FirstMs: perMinute[0]?.p99Ms ?? 0,
      p99LastMs: perMinute.at(-1)?.p99Ms ?? 0,
      perMinute,
      eventsPublished: published.size,
      eventsDelivered: [...published].filter((id) => delivered.has(id)).length,
    };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
    if (databaseUrl) {
      const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {});
      await admin.end();
    }
  }
}

export const soakVerdictLine = (v: SoakVerdict): string =>
  `${v.errors === 0 && v.eventsDelivered === v.eventsPublished ? 'PASS' : 'FAIL'} soak: ${v.minutes} min, ${v.requests} requests, ${v.errors} errors; RSS ${v.rssStartMb} MB at start, ${v.rssEndMb} MB at end; p99 ${v.p99FirstMs} ms in the first minute, ${v.p99LastMs} ms in the last; events published ${v.eventsPublished}, delivered ${v.eventsDelivered}, lost ${v.eventsPublished - v.eventsDelivered}`;

if (import.meta.main) {
  const v = await soakDrill({
    minutes: Number(cliArg('minutes', '10')),
    concurrency: Number(cliArg('concurrency', '16')),
    log: (l) => console.error(l),
  });
  console.log(soakVerdictLine(v));
  process.exitCode = v.errors === 0 && v.eventsDelivered === v.eventsPublished ? 0 : 1;
}
