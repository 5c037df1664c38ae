import { describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus } from '../helpers/expect-status.ts';

const ROOT = join(import.meta.dir, '..', '..');

const serverEnv = (port: number, dataDir: string) => ({
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  DATA_DIR: dataDir,
  MASTER_KEY: '',
  DATABASE_URL: '',
  NATS_URL: '',
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
});

describe('the server entry', () => {
  it('stops on a port in use with one line, before making a data directory or a key', async () => {
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('busy') });
    const dir = mkdtempSync(join(tmpdir(), 'ids-serve-'));
    const dataDir = join(dir, 'data');
    try {
      const r = Bun.spawnSync([process.execPath, join(ROOT, 'entry/bun.ts')], {
        env: serverEnv(taken.port as number, dataDir),
      });
      const err = r.stderr.toString();
      expect(r.exitCode).toBe(1);
      expect(err).toContain(`cannot listen on 127.0.0.1:${taken.port}: the port is in use`);
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(err).not.toContain('[start]');
      expect(err).not.toContain('    at ');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      taken.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('says on standard error what a first start is doing, in order, then starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-serve-'));
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
    const port = probe.port as number;
    probe.stop(true);
    const proc = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
      env: serverEnv(port, join(dir, 'data')),
      stdout: 'ignore',
      stderr: 'pipe',
    });
    try {
      let err = '';
      const decoder = new TextDecoder();
      const reader = proc.stderr.getReader();
      while (!err.includes('Try: curl')) {
        const { done, value } = await reader.read();
        if (done) break;
        err += decoder.decode(value);
      }
      const steps = err.split('\n').filter((l) => l.startsWith('[start] '));
      expect(steps.map((l) => l.split(' ').slice(1, 3).join(' '))).toEqual([
        'generating a',
        'creating the',
        'applying migrations',
        'creating the',
      ]);
      expect(steps[1]).toContain(`${join(dir, 'data')}/pglite`);
      expect(err.indexOf('[start] creating the development')).toBeLessThan(
        err.indexOf('Development organization'),
      );
      await expectStatus(await fetch(`http://127.0.0.1:${port}/healthz`), 200);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('refuses a production start without SMTP_URL, naming it, and starts with MAIL_OUTBOX=true', async () => {
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
    const port = probe.port as number;
    probe.stop(true);
    const env = {
      ...serverEnv(port, 'memory://'),
      NODE_ENV: 'production',
      MASTER_KEY: `k1:${btoa('m'.repeat(32))}`,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      SMTP_URL: '',
      MAIL_OUTBOX: '',
    };
    // Bounded: a server that starts instead of refusing would otherwise hold the test until its timeout.
    const refused = Bun.spawnSync([process.execPath, join(ROOT, 'entry/bun.ts')], { env, timeout: 30_000 });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.toString()).toContain('SMTP_URL is required when NODE_ENV=production');

    const proc = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
      env: { ...env, MAIL_OUTBOX: 'true' },
      stdout: 'ignore',
      stderr: 'ignore',
    });
    try {
      const deadline = Date.now() + 60_000;
      let answer: Response | undefined;
      while (!answer && Date.now() < deadline) {
        answer = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (!answer) await Bun.sleep(100);
      }
      if (!answer) throw new Error('the server did not answer /healthz within 60 s');
      await expectStatus(answer, 200);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  }, 90_000);
});
