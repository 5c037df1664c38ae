import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from '../../scripts/free-port.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { DATABASE_URL, unique } from './support.ts';

const ROOT = join(import.meta.dir, '..', '..');
const MASTER_KEY = `k1:${btoa('r'.repeat(32))}`;
const schema = unique('mk');
const dataDir = mkdtempSync(join(tmpdir(), 'ids-pg-key-'));
const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
const servers: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(async () => {
  for (const s of servers) s.kill('SIGKILL');
  await admin.unsafe(`drop schema if exists ${schema} cascade`);
  await admin.end();
  rmSync(dataDir, { recursive: true, force: true });
});

const env = (extra: Record<string, string>) => ({
  ...process.env,
  DATABASE_URL,
  DATABASE_SCHEMA: schema,
  DATA_DIR: dataDir,
  NATS_URL: '',
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  MASTER_KEY: '',
  ...extra,
});

/** A server on Postgres, answering /healthz; its standard error is collected in `stderr`. */
async function replica() {
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, 'entry/bun.ts'], {
    cwd: ROOT,
    env: env({ MASTER_KEY, PORT: String(port) }),
    stdout: 'ignore',
    stderr: 'pipe',
  });
  servers.push(proc);
  const chunks: string[] = [];
  (async () => {
    const reader = proc.stderr.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read())
      chunks.push(new TextDecoder().decode(r.value));
  })();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`the replica exited: ${chunks.join('')}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { base: `http://127.0.0.1:${port}`, stderr: () => chunks.join('') };
    await Bun.sleep(100);
  }
  throw new Error('the replica did not answer /healthz within 60 s');
}

describe('the master key on Postgres', () => {
  it('is required: a server without MASTER_KEY stops, saying how to make one, and generates none', () => {
    // Without the rule the server would start and run: the timeout ends it, and the test fails.
    const r = Bun.spawnSync([process.execPath, 'entry/bun.ts'], {
      cwd: ROOT,
      env: env({ PORT: '0' }),
      timeout: 30_000,
    });
    const err = r.stderr.toString();
    expect(r.exitCode).toBe(1);
    expect(err).toContain('MASTER_KEY is required when DATABASE_URL is set');
    expect(err).toContain('openssl rand -base64 32');
    expect(err).not.toContain('    at ');
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('given to every replica, lets each open what another sealed; the first organization comes from the CLI', async () => {
    const a = await replica();
    const b = await replica();
    const made = Bun.spawnSync(['npx', '--no-install', 'identity-service', 'org', 'create', '--name', 'Pg'], {
      cwd: ROOT,
      env: env({ MASTER_KEY }),
    });
    expect({ code: made.exitCode, err: made.stderr.toString() }).toEqual({
      code: 0,
      err: expect.any(String),
    });
    const { organization_id, api_key } = JSON.parse(made.stdout.toString());
    const headers = {
      'Service-OrgID': organization_id,
      'Service-API-Key': api_key,
      'content-type': 'application/json',
    };
    const bucket = '/organizations/attributes/end_user_read_write';
    await expectStatus(
      await fetch(`${a.base}${bucket}`, { method: 'PUT', headers, body: JSON.stringify({ plan: 'pro' }) }),
      204,
    );
    const read = await fetch(`${b.base}${bucket}`, { headers });
    await expectStatus(read, 200);
    expect(await read.json()).toEqual({ result: { plan: 'pro' } });

    const hook = await fetch(`${a.base}/organizations/webhooks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        name: 'sealed',
        target_url: 'https://hooks.example.com/pg',
        custom_headers: { 'X-Secret': ['s3cret'] },
      }),
    });
    await expectStatus(hook, 201);
    const { id } = ((await hook.json()) as { result: { id: string } }).result;
    const seen = await fetch(`${b.base}/organizations/webhooks/${id}`, { headers });
    await expectStatus(seen, 200);
    expect(((await seen.json()) as { result: { custom_headers: unknown } }).result.custom_headers).toEqual({
      'X-Secret': ['s3cret'],
    });
    // Postgres gets no development organization: nothing printed "this once".
    for (const r of [a, b]) expect(r.stderr()).not.toContain('Development organization created');
  }, 120_000);
});
