import { afterAll, describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from '../../scripts/free-port.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { DATABASE_URL, unique } from './support.ts';

const ROOT = join(import.meta.dir, '..', '..');
const MASTER_KEY = `k1:${btoa('w'.repeat(32))}`;
const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
const schemas: string[] = [];
const procs: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const p of procs) p.kill('SIGKILL');
  for (const s of schemas) await admin.unsafe(`drop schema if exists ${s} cascade`);
  await admin.end();
});

/** The processes whose parent is `pid`, read from /proc. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        // The command may hold spaces and parentheses: the parent pid is the second field after the last ')'.
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

type Line = { msg: string; worker?: number; status?: number; path?: string; applied?: string[] };

/** A supervisor with `workers` workers on one port and a Postgres schema of its own; its log lines parsed. */
async function startWorkers(cmd: string[], workers: number, env: Record<string, string> = {}) {
  const schema = unique('workers');
  schemas.push(schema);
  const port = await freePort();
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL,
      DATABASE_SCHEMA: schema,
      MASTER_KEY,
      NATS_URL: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: String(port),
      WORKERS: String(workers),
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  procs.push(proc);
  const lines: Line[] = [];
  let raw = '';
  for (const stream of [proc.stdout, proc.stderr])
    (async () => {
      const decoder = new TextDecoder();
      let rest = '';
      const reader = stream.getReader();
      for (let c = await reader.read(); !c.done; c = await reader.read()) {
        const chunk = decoder.decode(c.value, { stream: true });
        const text = rest + chunk;
        raw += chunk;
        const parts = text.split('\n');
        rest = parts.pop() ?? '';
        for (const part of parts)
          try {
            lines.push(JSON.parse(part) as Line);
          } catch {}
      }
    })();
  const base = `http://127.0.0.1:${port}`;
  const listening = () => lines.filter((l) => l.msg === 'listening').length;
  const deadline = Date.now() + 90_000;
  while (listening() < workers) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`the workers did not start (exit ${proc.exitCode}):\n${raw}`);
    await Bun.sleep(100);
  }
  /** GET /healthz on fresh connections: SO_REUSEPORT spreads connections, not requests. */
  const hit = async (n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++)
      statuses.push(
        await fetch(`${base}/healthz`, { keepalive: false, headers: { connection: 'close' } }).then(
          (r) => r.status,
          () => 0,
        ),
      );
    return statuses;
  };
  const servedBy = () => {
    const by = new Map<number, number>();
    for (const l of lines)
      if (l.msg === 'request' && l.path === '/healthz' && l.worker !== undefined)
        by.set(l.worker, (by.get(l.worker) ?? 0) + 1);
    return by;
  };
  return { proc, lines, raw: () => raw, hit, servedBy, listening };
}

async function checkWorkers(cmd: string[]) {
  const w = await startWorkers(cmd, 2);
  // Every worker answers some of 60 connections (all on one: a chance of 2^-59).
  const statuses = await w.hit(60);
  expect(statuses.every((s) => s === 200)).toBe(true);
  await Bun.sleep(200);
  const by = w.servedBy();
  expect([...by.keys()].sort()).toEqual([0, 1]);
  // Migrations are applied by one worker; the other finds nothing left to apply.
  const applied = w.lines.filter((l) => l.msg === 'migrations applied' && (l.applied?.length ?? 0) > 0);
  expect(applied).toHaveLength(1);

  // A worker killed with SIGKILL is replaced, and the port keeps answering meanwhile.
  const [victim] = childrenOf(w.proc.pid);
  expect(victim).toBeDefined();
  process.kill(victim!, 'SIGKILL');
  // Once the kernel has closed the dead worker's socket, its siblings take every connection.
  const gone = Date.now() + 10_000;
  while (childrenOf(w.proc.pid).includes(victim!) && Date.now() < gone) await Bun.sleep(20);
  const during = await w.hit(20);
  expect(during.every((s) => s === 200)).toBe(true);
  const deadline = Date.now() + 60_000;
  while (w.listening() < 3 && Date.now() < deadline) await Bun.sleep(100);
  expect(w.lines.some((l) => l.msg === 'a worker exited; starting another in its place')).toBe(true);
  expect(w.listening()).toBe(3);
  expect(childrenOf(w.proc.pid)).toHaveLength(2);

  // SIGTERM stops every worker gracefully, and the supervisor exits 0.
  w.proc.kill('SIGTERM');
  expect(await w.proc.exited).toBe(0);
  expect(w.lines.filter((l) => l.msg === 'stopped' && l.worker !== undefined)).toHaveLength(2);
}

/** Two consecutive loopback ports free a moment ago: METRICS_PORT for two workers. */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const first = await freePort();
    const second = await new Promise<number | undefined>((resolve) => {
      const s = createServer()
        .once('error', () => resolve(undefined))
        .listen(first + 1, '127.0.0.1', () => s.close(() => resolve(first + 1)));
    });
    if (second !== undefined) return first;
  }
}

/** Each worker keeps its own metrics, served on METRICS_PORT + its index; together they count every request. */
async function checkWorkerMetrics(cmd: string[]) {
  const metricsPort = await twoFreePorts();
  const w = await startWorkers(cmd, 2, { METRICS_PORT: String(metricsPort) });
  const statuses = await w.hit(40);
  expect(statuses.every((s) => s === 200)).toBe(true);
  await Bun.sleep(200);
  const served = w.servedBy();
  const counts: number[] = [];
  for (const i of [0, 1]) {
    const res = await fetch(`http://127.0.0.1:${metricsPort + i}/metrics`);
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 200);
    const line = text
      .split('\n')
      .find((l) =>
        l.startsWith(
          'identity_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"}',
        ),
      );
    counts.push(Number(line?.split(' ').pop() ?? 0));
  }
  // Which worker took which connection is the kernel's choice; the metrics say the same as the logs.
  expect(counts).toEqual([served.get(0) ?? 0, served.get(1) ?? 0]);
  expect(counts[0]! + counts[1]!).toBe(40);
  w.proc.kill('SIGTERM');
  expect(await w.proc.exited).toBe(0);
  for (const i of [0, 1])
    expect(
      await fetch(`http://127.0.0.1:${metricsPort + i}/healthz`).then(
        () => 'open',
        () => 'closed',
      ),
    ).toBe('closed');
}

describe('WORKERS: several server processes on one port', () => {
  it('with METRICS_PORT on Bun: worker i serves its own metrics on METRICS_PORT + i', async () => {
    await checkWorkerMetrics([process.execPath, 'entry/bun.ts']);
  }, 180_000);

  it('with METRICS_PORT on Node: the same', async () => {
    await checkWorkerMetrics(['node', '--import', 'tsx', 'entry/node.ts']);
  }, 180_000);

  it('on Bun: connections reach every worker, a killed worker is replaced, SIGTERM stops all', async () => {
    await checkWorkers([process.execPath, 'entry/bun.ts']);
  }, 180_000);

  it('on Node: the same through the cluster', async () => {
    await checkWorkers(['node', '--import', 'tsx', 'entry/node.ts']);
  }, 180_000);

  it('stops at once when a worker cannot start, naming why', async () => {
    // A database that refuses: the first worker fails before it listens, and the supervisor stops.
    const proc = Bun.spawn([process.execPath, 'entry/bun.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        MASTER_KEY,
        NATS_URL: '',
        LOG_LEVEL: 'info',
        PORT: String(await freePort()),
        WORKERS: '2',
      },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    procs.push(proc);
    const exit = await Promise.race([proc.exited, Bun.sleep(60_000).then(() => 'hung')]);
    const out = (await new Response(proc.stdout).text()) + (await new Response(proc.stderr).text());
    expect(exit, out).toBe(1);
    expect(out).toContain('a worker failed to start; stopping the others');
  }, 90_000);

  it('is refused on Deno, which has no shared port for it', () => {
    const r = Bun.spawnSync([join(ROOT, 'node_modules/.bin/deno'), 'run', '-A', 'entry/deno.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL, MASTER_KEY, NATS_URL: '', PORT: '0', WORKERS: '2' },
      timeout: 60_000,
    });
    expect(r.exitCode, r.stderr.toString()).toBe(1);
    expect(r.stderr.toString()).toContain('WORKERS=2 runs on Bun and Node');
  }, 90_000);
});
