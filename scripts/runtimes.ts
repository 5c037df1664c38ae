/**
 * Starts the server on Bun, Node and Deno in turn (each on a fresh embedded database), runs the shared
 * smoke body against it (the metrics listener too), and checks that SIGTERM stops it cleanly. `npm run test:runtimes`.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pkg from '../package.json' with { type: 'json' };
import { smoke } from '../test/runtimes/smoke.ts';
import { freePort } from './free-port.ts';

/** Short, so the smoke's stalled request gets its 408 soon. */
const REQUEST_TIMEOUT_MS = 2000;
const ROOT = join(import.meta.dir, '..');
const BIN = join(ROOT, 'node_modules', '.bin');

/** The command of an npm start script, run directly (npm would stand between the signal and the server). */
function startScript(name: string): string[] {
  const scripts: Record<string, string> = pkg.scripts;
  const [program = '', ...args] = (scripts[name] ?? '').split(' ');
  return [existsSync(join(BIN, program)) ? join(BIN, program) : program, ...args];
}

// The documented ways to start: `npm start`, `npm run start:node`, `npm run start:deno`.
const commands: Record<string, () => string[]> = {
  bun: () => [process.execPath, ...startScript('start').slice(1)],
  node: () => startScript('start:node'),
  deno: () => startScript('start:deno'),
};

async function runOne(
  runtime: string,
): Promise<{ runtime: string; ok: boolean; detail: string; ms: number }> {
  const started = performance.now();
  const dir = mkdtempSync(join(tmpdir(), `ids-${runtime}-`));
  const port = await freePort();
  const metricsPort = await freePort();
  const proc = Bun.spawn(commands[runtime]!(), {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dir,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
      NATS_URL: '',
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      METRICS_PORT: String(metricsPort),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  let output = '';
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      output += decoder.decode(value);
    }
  };
  const pumps = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  try {
    const deadline = Date.now() + 90_000;
    // The listening line comes on standard output and the organization on standard error: two pipes,
    // read apart, so either may arrive first. Both are awaited.
    while (!/"msg":"listening"/.test(output) || !/Service-API-Key: \S+/.test(output)) {
      if (proc.exitCode !== null || Date.now() > deadline)
        throw new Error(
          /"msg":"listening"/.test(output)
            ? `no development organization printed:\n${output}`
            : `server did not start:\n${output}`,
        );
      await Bun.sleep(50);
    }
    const orgId = output.match(/Service-OrgID: (\S+)/)?.[1];
    const apiKey = output.match(/Service-API-Key: (\S+)/)?.[1];
    if (!orgId || !apiKey) throw new Error(`no development organization printed:\n${output}`);
    const checks = await smoke({
      baseUrl: `http://127.0.0.1:${port}`,
      orgId,
      apiKey,
      runtime,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      metricsUrl: `http://127.0.0.1:${metricsPort}`,
    });
    proc.kill('SIGTERM');
    const code = await Promise.race([proc.exited, Bun.sleep(15_000).then(() => 'timeout' as const)]);
    if (code !== 0) throw new Error(`SIGTERM did not stop the server cleanly (exit ${code}):\n${output}`);
    if (!/"msg":"stopped"/.test(output)) throw new Error(`no 'stopped' log after SIGTERM:\n${output}`);
    const metricsAfter = await fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
      () => 'still answering',
      () => 'closed',
    );
    if (metricsAfter !== 'closed') throw new Error('the metrics listener still answers after SIGTERM');
    return {
      runtime,
      ok: true,
      detail: `${checks.join(', ')}, graceful stop`,
      ms: performance.now() - started,
    };
  } catch (e) {
    proc.kill('SIGKILL');
    return { runtime, ok: false, detail: (e as Error).message, ms: performance.now() - started };
  } finally {
    await proc.exited;
    await pumps.catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(commands);
let failed = false;
for (const runtime of wanted) {
  const r = await runOne(runtime);
  console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.runtime} (${(r.ms / 1000).toFixed(1)} s): ${r.detail}`);
  failed ||= !r.ok;
}
process.exit(failed ? 1 : 0);
