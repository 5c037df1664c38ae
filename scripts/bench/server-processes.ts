/**
 * The real server (`bun entry/bun.ts`) as a benchmark runs it: WORKERS processes sharing one port, each
 * with the metrics listener of its own (METRICS_PORT + i), which tells when every worker listens and how
 * many deliveries each made. The processes die with the benchmark (scripts/bench/with-parent.ts).
 */
import { join } from 'node:path';
import { childrenOf } from './cpu.ts';
import { IMAGE_RUNTIME_ENV, ROOT } from './processes.ts';

export interface ServerProcesses {
  /** The public port's URL. */
  base: string;
  /** The processes that serve: the workers, or the one process with WORKERS=1. */
  pids(): number[];
  /** Successful deliveries each worker has counted so far (`identity_webhook_deliveries_total`). */
  delivered(): Promise<number[]>;
  /** The processes' last output lines (LOG_LEVEL=warn: warnings and errors). */
  output(): string;
  /** SIGTERM, then SIGKILL after 15 s. */
  stop(): Promise<void>;
}

const isFree = (port: number): boolean => {
  try {
    Bun.serve({ hostname: '127.0.0.1', port, fetch: () => new Response() }).stop(true);
    return true;
  } catch {
    return false;
  }
};

/** `count` consecutive free ports on 127.0.0.1 (the public one, then one metrics port per worker). */
function freePorts(count: number): number {
  for (let tries = 0; tries < 50; tries++) {
    const first = 20_000 + Math.floor(Math.random() * 40_000);
    if (Array.from({ length: count }, (_, i) => first + i).every(isFree)) return first;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

async function until(cond: () => Promise<boolean>, ms: number, what: string, output: () => string) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}:\n${output()}`);
    await Bun.sleep(100);
  }
}

/**
 * Starts `workers` server processes with `env` and waits until every worker listens. With `cpuProfDir`,
 * each process writes a CPU profile there when it stops (`bun --cpu-prof`).
 */
export async function startServerProcesses(
  env: Record<string, string>,
  workers: number,
  cpuProfDir?: string,
): Promise<ServerProcesses> {
  const port = freePorts(workers + 1);
  const metricsPort = port + 1;
  const base = `http://127.0.0.1:${port}`;
  const proc = Bun.spawn(
    [
      process.execPath,
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      '--preload',
      join(ROOT, 'scripts/bench/with-parent.ts'),
      join(ROOT, 'entry/bun.ts'),
    ],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        ...IMAGE_RUNTIME_ENV,
        ...env,
        WORKERS: String(workers),
        PORT: String(port),
        PUBLIC_BASE_URL: base,
        METRICS_PORT: String(metricsPort),
      },
      stdout: 'pipe',
      stderr: 'pipe',
      // The channel is what with-parent.ts watches: nothing is sent on it.
      ipc() {},
    },
  );
  const lines: string[] = [];
  for (const stream of [proc.stdout, proc.stderr])
    void (async () => {
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      for (let c = await reader.read(); !c.done; c = await reader.read()) {
        lines.push(...decoder.decode(c.value, { stream: true }).split('\n').filter(Boolean));
        lines.splice(0, Math.max(0, lines.length - 30));
      }
    })();
  const output = () => lines.join('\n');
  const metrics = (i: number) => `http://127.0.0.1:${metricsPort + i}`;
  const handle: ServerProcesses = {
    base,
    pids: () => (workers > 1 ? childrenOf(proc.pid) : [proc.pid]),
    async delivered() {
      return Promise.all(
        Array.from({ length: workers }, async (_, i) => {
          const text = await (await fetch(`${metrics(i)}/metrics`)).text();
          return Number(
            /identity_webhook_deliveries_total\{outcome="succeeded"\} (\d+)/.exec(text)?.[1] ?? 0,
          );
        }),
      );
    },
    output,
    async stop() {
      proc.kill('SIGTERM');
      const killed = await Promise.race([proc.exited.then(() => false), Bun.sleep(15_000).then(() => true)]);
      if (killed) proc.kill('SIGKILL');
      await proc.exited;
    },
  };
  try {
    await until(
      async () => {
        if (proc.exitCode !== null) throw new Error(`the server exited with ${proc.exitCode}:\n${output()}`);
        for (let i = 0; i < workers; i++)
          if (
            !(await fetch(`${metrics(i)}/healthz`).then(
              (r) => r.ok,
              () => false,
            ))
          )
            return false;
        return true;
      },
      90_000,
      `${workers} worker(s) listening`,
      output,
    );
  } catch (e) {
    await handle.stop();
    throw e;
  }
  return handle;
}
