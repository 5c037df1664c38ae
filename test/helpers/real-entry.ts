import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

/** A loopback port free a moment ago. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
  const port = probe.port as number;
  probe.stop(true);
  return port;
}

/**
 * The real entry (entry/bun.ts) in a child process on a free loopback port, with an embedded database in
 * a fresh directory and the deployment file SERVICE_CONFIG names (empty: the repository's); it waits
 * for the development organization the first start prints, and answers with its headers for calls.
 * `env` adds settings (METRICS_PORT, say).
 */
export async function startRealEntry(serviceConfig: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ids-entry-'));
  const port = freePort();
  const server = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      SERVICE_CONFIG: serviceConfig,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      MASTER_KEY: '',
      DATABASE_URL: '',
      NATS_URL: '',
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stderr: 'pipe',
    stdout: 'ignore',
  });
  /** Stops it with SIGTERM (a graceful shutdown) and answers its exit code. */
  const stop = async () => {
    server.kill('SIGTERM');
    const code = await server.exited;
    rmSync(dir, { recursive: true, force: true });
    return code;
  };
  let err = '';
  const reader = server.stderr.getReader();
  const deadline = Date.now() + 60_000;
  while (!/API-Key: (\S+)/.test(err) && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    err += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const orgId = /OrgID: (\S+)/.exec(err)?.[1];
  const key = /API-Key: (\S+)/.exec(err)?.[1];
  if (!orgId || !key) {
    await stop();
    throw new Error(`no development organization on standard error:\n${err}`);
  }
  return {
    base: `http://127.0.0.1:${port}`,
    headers: { 'Service-OrgID': orgId, 'Service-API-Key': key, 'content-type': 'application/json' },
    stop,
  };
}
