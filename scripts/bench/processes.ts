import { join } from 'node:path';

export const ROOT = join(import.meta.dir, '..', '..');

/**
 * What the container image sets for Bun (Dockerfile ENV), given to every server a benchmark starts so
 * that it measures the server as deployed: Bun's allocator (mimalloc) keeps freed memory 10 s before it
 * gives it back to the system, rather than 10 ms, which under load cost a token grant a quarter of its
 * CPU (unmapping, then faulting the same pages in again). The caller's own value wins.
 */
export const IMAGE_RUNTIME_ENV = {
  MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? '10000',
};

export interface Child {
  pid: number;
  output: () => string;
  stop: () => Promise<void>;
}

/**
 * The environment of the real entry (`bun entry/bun.ts`) on a fresh embedded database in `dataDir`,
 * quiet (LOG_LEVEL=warn), with no Postgres or NATS, as the container image runs Bun.
 */
export const embeddedServiceEnv = (port: string, dataDir: string) => ({
  PORT: port,
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'development',
  DATABASE_URL: '',
  NATS_URL: '',
  ...IMAGE_RUNTIME_ENV,
});

/** Starts a process and waits until its output matches `ready`. */
export async function startChild(
  cmd: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<Child> {
  const proc = Bun.spawn(cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe' });
  let out = '';
  const decoder = new TextDecoder();
  for (const stream of [proc.stdout, proc.stderr]) {
    void (async () => {
      const reader = stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        out += decoder.decode(value);
      }
    })();
  }
  const deadline = Date.now() + timeoutMs;
  while (!ready.test(out)) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${cmd.join(' ')} did not become ready:\n${out}`);
    }
    await Bun.sleep(25);
  }
  return {
    pid: proc.pid,
    output: () => out,
    stop: async () => {
      proc.kill('SIGTERM');
      await Promise.race([proc.exited, Bun.sleep(10_000).then(() => proc.kill('SIGKILL'))]);
    },
  };
}

/** Runs the load generator in its own process and returns its summary. */
export async function runLoad(
  url: string,
  concurrency: number,
  seconds: number,
  headers: Record<string, string> = {},
  /** A body to POST with each request (LOAD_BODY); without it, GET. */
  body?: string,
) {
  const args = Object.entries(headers).map(([k, v]) => `${k}:${v}`);
  const proc = Bun.spawn(
    [
      process.execPath,
      join(ROOT, 'scripts/bench/load.ts'),
      url,
      String(concurrency),
      String(seconds),
      ...args,
    ],
    {
      stdout: 'pipe',
      stderr: 'inherit',
      ...(body !== undefined ? { env: { ...process.env, LOAD_BODY: body } } : {}),
    },
  );
  const text = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(text.trim().split('\n').at(-1)!) as {
    requests: number;
    errors: number;
    perSecond: number;
    p50: number;
    p99: number;
  };
}
