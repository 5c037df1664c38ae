/**
 * The replica drill: `replicas` server processes (the real entry) on one Postgres, with JetStream or the
 * Postgres-backed queue, deliver bursts of test events to `webhooks` webhooks on an HTTPS receiver in
 * this process. The first burst runs undisturbed: every replica must deliver some of it (consumers
 * shared) and no delivery may arrive twice. During the second burst one replica is killed with SIGKILL
 * once a quarter of its deliveries have arrived; every event whose publish was answered 201 must still
 * reach every webhook at least once. Also checked: migrations applied once by replicas starting
 * together, and an API key revoked through one replica refused by the others within the key cache's 5 s.
 *
 * Each replica has its own PUBLIC_BASE_URL (its port), so the `iss` of a delivery names the replica that
 * made it; nothing else differs between them.
 *
 *   npm run drill:replicas -- [--bus pg-queue|jetstream] [--events 10000] [--webhooks 10] [--replicas 3]
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { deliveryEnv } from '../../test/helpers/webhooks.ts';
import { deleteStreams } from '../bench/streams.ts';
import { organization } from '../bench/test-events.ts';
import { freePort } from '../free-port.ts';
import { cliArg } from './cli-arg.ts';
import { type Fault, startDrillReceiver } from './receiver.ts';
import { privateNats, privatePostgres } from './services.ts';

const ROOT = join(import.meta.dir, '..', '..');
/** DRILL_LOGS=<dir>: every replica's whole output goes to <dir>/replica-<index>.log as well. */
const logDir = process.env.DRILL_LOGS;

export interface ReplicaDrillOptions {
  databaseUrl: string;
  /** JetStream servers; the Postgres-backed queue without. */
  natsUrl?: string;
  replicas: number;
  webhooks: number;
  /** Events of each of the two bursts. */
  events: number;
  /** Events per POST /test-events. @default 50 */
  perRequest?: number;
  /** Give up waiting for deliveries after this long. @default 180000 */
  timeoutMs?: number;
  /**
   * What happens during the second burst, once a quarter of its deliveries have arrived. @default
   * replica 1 killed with SIGKILL; `null` runs the steady burst only.
   */
  disruption?: { name: string; run(replicas: ReplicaHandle[]): Promise<void> } | null;
  /** How the receiver answers a request it is sent: faults for the receiver drills. @default always 204 */
  fault?: (delivery: { eventId: string; webhookId: string; attempt: number }) => Fault;
  log?: (line: string) => void;
}

export interface BurstVerdict {
  published: number;
  expected: number;
  deliveredAtLeastOnce: number;
  lost: number;
  duplicates: number;
  /** Deliveries made by each replica, by its index. */
  byReplica: number[];
  /**
   * What the service recorded for the burst: failed attempts by error kind (each retried, so the receiver
   * may have counted one that the service did not), and deliveries with more than one successful attempt
   * (a message handled twice, such as after its lease expired).
   */
  failedAttempts: Record<string, number>;
  succeededTwice: number;
  /** How long the successful attempts took, POST to answer (ms). */
  attemptMs: { p50: number; p99: number };
}

export interface ReplicaHandle {
  index: number;
  base: string;
  /** Kills the replica with SIGKILL; the bursts stop sending to it. */
  kill(): void;
}

export interface ReplicaDrillResult {
  steady: BurstVerdict;
  disrupted?: BurstVerdict & { disruption: string; secondsToComplete: number };
  faults: Record<Fault, number>;
  migrationsAppliedBy: number;
  /** Milliseconds until every other replica refused the revoked key. */
  revokedKeyRefusedAfterMs: number;
}

interface Replica {
  index: number;
  base: string;
  proc: ReturnType<typeof Bun.spawn>;
  lines: string[];
  /** Its last lines of output, whatever they say. */
  recent: string[];
  alive: boolean;
}

/** The error that names a replica which has exited, with its last lines, or null while it runs. */
function exitedBy(r: Replica, how: string): Error | null {
  if (r.proc.exitCode === null && r.proc.signalCode === null) return null;
  const last = r.recent
    .filter((l) => !l.includes('"msg":"request"'))
    .slice(-30)
    .join('\n')
    .slice(-12_000);
  return new Error(
    `replica ${r.index} exited ${how} (${r.proc.exitCode ?? r.proc.signalCode}); its last lines:\n${last}`,
  );
}

const MASTER_KEY = `drill:${btoa('r'.repeat(32))}`;

async function until(
  cond: () => boolean | Promise<boolean>,
  ms: number,
  what: string | (() => string),
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end)
      throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await Bun.sleep(25);
  }
}

const claimsOf = (jwt: string): { sub: string; iss: string; webhook_id: string } =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString());

export async function replicaDrill(o: ReplicaDrillOptions): Promise<ReplicaDrillResult> {
  const log = o.log ?? (() => {});
  const perRequest = o.perRequest ?? 50;
  const timeoutMs = o.timeoutMs ?? 180_000;
  const tag = `${Date.now().toString(36)}${process.pid}`;
  const schema = `drill_${tag}`;
  const env: Record<string, string> = {
    ...process.env,
    ...(deliveryEnv() as Record<string, string>),
    DATABASE_URL: o.databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: o.natsUrl ?? '',
    NATS_STREAM_PREFIX: `D${tag}`.slice(0, 32),
    MASTER_KEY,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    PLUGINS: 'webhooks',
    // Bursts far above the spec's 10 test events a minute: the drill needs thousands.
    TEST_EVENTS_RATE_LIMIT: '1000000/1000000',
  };
  // Deliveries by webhook and event: how many times each arrived, and which replica made each.
  const seen = new Map<string, number>();
  const byIss = new Map<string, number>();
  const attempts = new Map<string, number>();
  const receiver = await startDrillReceiver({
    fault: (body) => {
      if (!o.fault) return 'none';
      const claims = claimsOf(body);
      const key = `${claims.webhook_id} ${claims.sub}`;
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      return o.fault({ eventId: claims.sub, webhookId: claims.webhook_id, attempt });
    },
    onRequest: (body) => {
      const claims = claimsOf(body);
      const key = `${claims.webhook_id} ${claims.sub}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
      byIss.set(claims.iss, (byIss.get(claims.iss) ?? 0) + 1);
    },
  });
  const replicas: Replica[] = [];
  const admin = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });

  const spawn = (index: number, port: number): Replica => {
    const base = `http://127.0.0.1:${port}`;
    const proc = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), PUBLIC_BASE_URL: base, LOG_LEVEL: 'info' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const r: Replica = { index, base, proc, lines: [], recent: [], alive: true };
    for (const stream of [proc.stdout, proc.stderr])
      (async () => {
        const decoder = new TextDecoder();
        const reader = stream.getReader();
        let rest = '';
        for (let c = await reader.read(); !c.done; c = await reader.read()) {
          if (logDir) appendFileSync(join(logDir, `replica-${index}.log`), c.value);
          const parts = (rest + decoder.decode(c.value, { stream: true })).split('\n');
          rest = parts.pop() ?? '';
          // Only start-up lines and errors are kept: the request lines of a burst would fill memory.
          for (const line of parts) {
            r.recent.push(line);
            if (r.recent.length > 60) r.recent.shift();
          }
          for (const line of parts)
            if (
              line.includes('"msg":"migrations applied"') ||
              line.includes('"level":"error"') ||
              line.includes('"level":"fatal"') ||
              !line.startsWith('{')
            )
              r.lines.push(line);
        }
      })();
    return r;
  };

  try {
    const ports: number[] = [];
    for (let i = 0; i < o.replicas; i++) ports.push(await freePort());
    // Every replica at once: migrations must be applied by exactly one.
    for (const [i, port] of ports.entries()) replicas.push(spawn(i, port));
    for (const r of replicas)
      await until(
        () => {
          // One that exits while starting will never answer: say so with its last lines, now.
          const gone = exitedBy(r, 'while starting');
          if (gone) throw gone;
          return fetch(`${r.base}/healthz`).then(
            (x) => x.ok,
            () => false,
          );
        },
        120_000,
        () =>
          `replica ${r.index} at ${r.base} (its last lines: ${r.recent.slice(-10).join(' | ').slice(-4000)})`,
      );
    const migrationsAppliedBy = replicas.filter((r) =>
      r.lines.some((l) => l.includes('"msg":"migrations applied"') && !l.includes('"applied":[]')),
    ).length;
    log(`${o.replicas} replicas up; migrations applied by ${migrationsAppliedBy}`);

    const org = organization(env, 'Drill');
    const headers = {
      'Service-OrgID': org.organization_id,
      'Service-API-Key': org.api_key,
      'content-type': 'application/json',
    };
    const call = async (r: Replica, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${r.base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, text, json: () => JSON.parse(text) };
    };
    const webhookIds: string[] = [];
    for (let w = 0; w < o.webhooks; w++) {
      const r = replicas[w % replicas.length]!;
      const made = await call(r, 'POST', '/organizations/webhooks', {
        name: `drill ${w}`,
        // No timeout of its own: the service's default (10 s), as a webhook made with no options has.
        target_url: receiver.url(`/hook-${w}`),
      });
      if (made.status !== 201) throw new Error(`webhook create answered ${made.status} ${made.text}`);
      const id = made.json().result.id as string;
      const trigger = await call(r, 'POST', `/organizations/webhooks/${id}/triggers`, {
        trigger_type: 'event',
        trigger_name: 'PersonIdentified_v1',
      });
      if (trigger.status !== 201) throw new Error(`trigger answered ${trigger.status} ${trigger.text}`);
      webhookIds.push(id);
    }
    // A new webhook reaches every replica's router through its cache: wait for the caches to agree.
    await Bun.sleep(6000);

    /** The service's own record of the burst's attempts, from the shared database. */
    const recorded = async (published: string[]) => {
      const ids = `{${published.join(',')}}`;
      const failed = await admin.unsafe<Array<{ kind: string | null; n: string }>>(
        `select a.error_kind as kind, count(*) as n from ${schema}.webhook_attempts a
         join ${schema}.webhook_deliveries d on d.id = a.delivery_id
         where d.event_id = any($1::uuid[]) and not a.ok group by 1`,
        [ids],
      );
      const [twice] = await admin.unsafe<Array<{ n: string }>>(
        `select count(*) as n from (select a.delivery_id from ${schema}.webhook_attempts a
         join ${schema}.webhook_deliveries d on d.id = a.delivery_id
         where d.event_id = any($1::uuid[]) and a.ok group by 1 having count(*) > 1) t`,
        [ids],
      );
      const [latency] = await admin.unsafe<Array<{ p50: number | null; p99: number | null }>>(
        `select percentile_cont(0.5) within group (order by a.latency_ms) as p50,
                percentile_cont(0.99) within group (order by a.latency_ms) as p99
         from ${schema}.webhook_attempts a join ${schema}.webhook_deliveries d on d.id = a.delivery_id
         where d.event_id = any($1::uuid[]) and a.ok`,
        [ids],
      );
      return {
        failedAttempts: Object.fromEntries(failed.map((r) => [r.kind ?? 'unknown', Number(r.n)])),
        succeededTwice: Number(twice?.n ?? 0),
        attemptMs: { p50: Math.round(latency?.p50 ?? 0), p99: Math.round(latency?.p99 ?? 0) },
      };
    };
    const verdict = async (published: string[], from: Map<string, number>): Promise<BurstVerdict> => {
      let delivered = 0;
      let duplicates = 0;
      for (const id of published)
        for (const w of webhookIds) {
          const n = seen.get(`${w} ${id}`) ?? 0;
          if (n > 0) delivered++;
          if (n > 1) duplicates += n - 1;
        }
      const byReplica = replicas.map((r) => (byIss.get(r.base) ?? 0) - (from.get(r.base) ?? 0));
      const expected = published.length * webhookIds.length;
      return {
        published: published.length,
        expected,
        deliveredAtLeastOnce: delivered,
        lost: expected - delivered,
        duplicates,
        byReplica,
        ...(await recorded(published)),
      };
    };
    const burst = async (onProgress?: () => void) => {
      const published: string[] = [];
      let next = 0;
      const requests = Math.ceil(o.events / perRequest);
      let sent = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (sent < requests) {
            sent++;
            const count = Math.min(perRequest, o.events - (sent - 1) * perRequest);
            // Round robin over the live replicas; a request cut by the kill is sent again elsewhere.
            for (let attempt = 0; attempt < replicas.length; attempt++) {
              const live = replicas.filter((r) => r.alive);
              const r = live[next++ % live.length]!;
              try {
                const res = await call(r, 'POST', '/test-events', [
                  { event_name: 'PersonIdentified_v1', count },
                ]);
                if (res.status === 201) {
                  for (const e of res.json().result) published.push(e.event_metadata.event_id);
                  break;
                }
              } catch {
                // The replica was killed while answering: whether these were published is unknown.
              }
            }
            onProgress?.();
          }
        }),
      );
      return published;
    };
    /** Waits for the deliveries; past the timeout the verdict counts what is missing as lost. */
    const settled = async (cond: () => boolean, what: string) => {
      try {
        await until(cond, timeoutMs, what);
      } catch (e) {
        log(`${(e as Error).message}; the replicas' last errors:`);
        for (const r of replicas)
          for (const line of r.lines.slice(-5)) log(`  replica ${r.index}: ${line.slice(0, 400)}`);
      }
    };
    const deliveredAll = (published: string[]) => () =>
      published.every((id) => webhookIds.every((w) => seen.has(`${w} ${id}`)));

    // Undisturbed: shared consumers, no duplicates.
    const before = new Map(byIss);
    const steadyPublished = await burst();
    await settled(deliveredAll(steadyPublished), 'every event of the steady burst at every webhook');
    await Bun.sleep(1000);
    const steady = await verdict(steadyPublished, before);
    log(`steady burst: ${JSON.stringify(steady)}`);

    const disruption =
      o.disruption === undefined
        ? {
            name: `replica ${1 % replicas.length} killed (kill -9)`,
            run: async (handles: ReplicaHandle[]) => handles[1 % handles.length]!.kill(),
          }
        : o.disruption;
    let disrupted: ReplicaDrillResult['disrupted'];
    if (disruption) {
      const start = new Map(byIss);
      const startedAt = Date.now();
      const quarter = (o.events * webhookIds.length) / 4;
      const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      const handles: ReplicaHandle[] = replicas.map((r) => ({
        index: r.index,
        base: r.base,
        kill: () => {
          r.alive = false;
          r.proc.kill('SIGKILL');
        },
      }));
      const disturb = until(
        () => total(byIss) - total(start) >= quarter,
        timeoutMs,
        'a quarter of the deliveries',
      ).then(() => disruption.run(handles));
      const published = await burst();
      await disturb;
      await settled(
        deliveredAll(published),
        `every event of the burst with ${disruption.name} at every webhook`,
      );
      disrupted = {
        ...(await verdict(published, start)),
        disruption: disruption.name,
        secondsToComplete: Math.round((Date.now() - startedAt) / 100) / 10,
      };
      log(`burst with ${disruption.name}: ${JSON.stringify(disrupted)}`);
    }

    // An API key revoked through one replica is refused by the others within the 5 s key cache.
    const live = replicas.filter((r) => r.alive);
    // A replica nobody killed must still be running: one that exited by itself is a finding, with its last lines.
    for (const r of live) {
      const gone = exitedBy(r, 'by itself');
      if (gone) throw gone;
    }
    for (const r of live) {
      const ok = await call(r, 'GET', '/organizations');
      if (ok.status !== 200) throw new Error(`GET /organizations answered ${ok.status} ${ok.text}`);
    }
    const rotated = Bun.spawnSync(
      [
        process.execPath,
        join(ROOT, 'scripts/cli.ts'),
        'org',
        'api-key',
        'rotate',
        '--org',
        org.organization_id,
        '--grace',
        '0',
      ],
      { cwd: ROOT, env },
    );
    if (rotated.exitCode !== 0) throw new Error(`api-key rotate failed: ${rotated.stderr.toString()}`);
    const revokedAt = Date.now();
    await until(
      async () => {
        for (const r of live) if ((await call(r, 'GET', '/organizations')).status !== 401) return false;
        return true;
      },
      15_000,
      'every replica to refuse the rotated key',
    );
    const revokedKeyRefusedAfterMs = Date.now() - revokedAt;
    return {
      steady,
      ...(disrupted ? { disrupted } : {}),
      faults: receiver.faults,
      migrationsAppliedBy,
      revokedKeyRefusedAfterMs,
    };
  } finally {
    for (const r of replicas) r.proc.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.proc.exited));
    await receiver.stop();
    await admin.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {});
    await admin.end();
    // The streams of this run's prefix, empty or not, go with its schema.
    if (o.natsUrl) await deleteStreams(o.natsUrl, `${env.NATS_STREAM_PREFIX}_`).catch(() => {});
  }
}

/** One line for the operator: the counts the drill is judged by. */
export function verdictLine(name: string, v: BurstVerdict): string {
  const ok = v.lost === 0 && v.published > 0;
  return `${ok ? 'PASS' : 'FAIL'} ${name}: published ${v.published}, expected ${v.expected}, delivered at least once ${v.deliveredAtLeastOnce}, lost ${v.lost}, duplicates ${v.duplicates}, by replica ${v.byReplica.join('/')}; recorded: failed attempts ${JSON.stringify(v.failedAttempts)}, succeeded twice ${v.succeededTwice}, successful attempts p50/p99 ${v.attemptMs.p50}/${v.attemptMs.p99} ms`;
}

/** Faults of the receiver drill, by event: 1 in 10 first attempts hangs, 1 in 10 is reset, 2 in 10 are slow. */
export function receiverFaults(d: { eventId: string; attempt: number }): Fault {
  if (d.attempt > 1) return 'none';
  const n = Number.parseInt(d.eventId.replaceAll('-', '').slice(-4), 16) % 10;
  return n === 0 ? 'hang' : n === 1 ? 'reset' : n <= 3 ? 'slow' : 'none';
}

const SCENARIOS = ['kill', 'nats-restart', 'postgres-restart', 'receivers'] as const;

if (import.meta.main) {
  const scenario = (process.argv[2]?.startsWith('--') ? undefined : process.argv[2]) ?? 'kill';
  if (!(SCENARIOS as readonly string[]).includes(scenario))
    throw new Error(`scenario must be one of ${SCENARIOS.join(', ')} (got ${scenario})`);
  const bus = scenario === 'nats-restart' ? 'jetstream' : cliArg('bus', 'pg-queue');
  const nats = scenario === 'nats-restart' ? await privateNats() : undefined;
  const pg = scenario === 'postgres-restart' ? await privatePostgres() : undefined;
  const service = nats ?? pg;
  try {
    const result = await replicaDrill({
      databaseUrl: pg?.url ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
      ...(bus === 'jetstream'
        ? { natsUrl: nats?.url ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222' }
        : {}),
      replicas: Number(cliArg('replicas', '3')),
      webhooks: Number(cliArg('webhooks', '10')),
      events: Number(cliArg('events', '10000')),
      log: (line) => console.error(line),
      ...(scenario === 'receivers' ? { disruption: null, fault: receiverFaults, timeoutMs: 300_000 } : {}),
      ...(service
        ? {
            disruption: {
              name: `${scenario === 'nats-restart' ? 'NATS' : 'Postgres'} restarted`,
              run: () => service.restart(),
            },
          }
        : {}),
    });
    console.log(
      verdictLine(
        `${scenario} on ${bus}, undisturbed${scenario === 'receivers' ? ` (receiver faults ${JSON.stringify(result.faults)})` : ''}`,
        result.steady,
      ),
    );
    if (result.disrupted)
      console.log(verdictLine(`${scenario} on ${bus}, ${result.disrupted.disruption}`, result.disrupted));
    console.log(
      `migrations applied by ${result.migrationsAppliedBy} replica(s); a rotated API key refused by every replica after ${result.revokedKeyRefusedAfterMs} ms`,
    );
    // With receiver faults a delivery may arrive twice: an answer later than the webhook's timeout (counted
    // from the attempt's start, connection set-up included) is a failure to the service, retried later.
    const ok =
      result.steady.lost === 0 &&
      (scenario === 'receivers' || result.steady.duplicates === 0) &&
      (result.disrupted?.lost ?? 0) === 0;
    process.exitCode = ok ? 0 : 1;
  } catch (e) {
    if (service) console.error(`the restarted server's last log lines:\n${service.logTail()}`);
    throw e;
  } finally {
    await service?.stop();
  }
}
