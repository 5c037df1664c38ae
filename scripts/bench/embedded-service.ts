/**
 * The real server (`bun entry/bun.ts`) on a fresh embedded database (PGlite in a temporary data
 * directory), in its own process, as the container image runs Bun: what the over-HTTP benchmarks load.
 * It answers once `/healthz` does, with the development organization's id and API key its first start
 * printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { type Child, embeddedServiceEnv, ROOT, startChild } from './processes.ts';

export interface EmbeddedService {
  /** http://127.0.0.1:{port} */
  base: string;
  orgId: string;
  apiKey: string;
  /** A JSON request as the organization (its id and API key); throws unless 2xx, answers the body. */
  admin(method: string, path: string, body?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** Starts the server with `env` over the embedded defaults (a `PUBLIC_BASE_URL` of its own loopback port). */
export async function startEmbeddedService(env: Record<string, string> = {}): Promise<EmbeddedService> {
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
      async admin(method, path, body) {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { 'Service-OrgID': orgId, 'Service-API-Key': apiKey, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
        return text ? JSON.parse(text) : undefined;
      },
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
