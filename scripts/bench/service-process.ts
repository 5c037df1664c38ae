/**
 * The real server (`bun entry/bun.ts`) in its own process, as the container image runs Bun: what the
 * over-HTTP benchmarks load, on a fresh embedded database (PGlite in a temporary data directory, the
 * development organization its first start makes) or on Postgres (a private schema, an organization
 * made with the CLI). Each answers once its `/healthz` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from '../free-port.ts';
import { type Child, embeddedServiceEnv, ROOT, startChild } from './processes.ts';
import { startServerProcesses } from './server-processes.ts';
import { organization } from './test-events.ts';

export interface ServiceProcess {
  /** http://127.0.0.1:{port} */
  base: string;
  orgId: string;
  apiKey: string;
  /** The server's processes (one). */
  pids(): number[];
  /** A JSON request as the organization (its id and API key); throws unless 2xx, answers the body. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** A JSON request to the service at `base` as the organization; throws unless 2xx, answers the body. */
const adminOf =
  (base: string, orgId: string, apiKey: string): ServiceProcess['admin'] =>
  async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'Service-OrgID': orgId, 'Service-API-Key': apiKey, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

/** Starts the server with `env` over the embedded defaults (a `PUBLIC_BASE_URL` of its own loopback port). */
export async function startEmbeddedService(env: Record<string, string> = {}): Promise<ServiceProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'ids-bench-'));
  const port = String(await freePort());
  const base = `http://127.0.0.1:${port}`;
  let child: Child | undefined;
  try {
    child = await startChild(
      [process.execPath, join(ROOT, 'entry/bun.ts')],
      { ...embeddedServiceEnv(port, dir), PUBLIC_BASE_URL: base, ...env },
      /Service-API-Key: \S+/,
      // A first start makes the embedded database: slow on a busy machine.
      180_000,
    );
    while (
      !(await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      await Bun.sleep(50);
    const out = child.output();
    const orgId = out.match(/Service-OrgID: (\S+)/)![1]!;
    const apiKey = out.match(/Service-API-Key: (\S+)/)![1]!;
    const started = child;
    return {
      base,
      orgId,
      apiKey,
      pids: () => [started.pid],
      admin: adminOf(base, orgId, apiKey),
      async stop() {
        await started.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await child?.stop();
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/**
 * Starts the server with `env` on Postgres at `databaseUrl`, in a schema of its own dropped when it
 * stops (no NATS: the Postgres-backed queue), with an organization made by the CLI.
 */
export async function startPostgresService(
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const schema = `bench_svc_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const full: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    DATABASE_SCHEMA: schema,
    NATS_URL: '',
    MASTER_KEY: `bench:${btoa('s'.repeat(32))}`,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    ...env,
  };
  const dropSchema = async () => {
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {});
    await sql.end();
  };
  try {
    const servers = await startServerProcesses(full, 1);
    try {
      const org = organization(full, 'Bench');
      return {
        base: servers.base,
        orgId: org.organization_id,
        apiKey: org.api_key,
        pids: servers.pids,
        admin: adminOf(servers.base, org.organization_id, org.api_key),
        async stop() {
          await servers.stop();
          await dropSchema();
        },
      };
    } catch (e) {
      await servers.stop();
      throw e;
    }
  } catch (e) {
    await dropSchema();
    throw e;
  }
}
