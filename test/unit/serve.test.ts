import { describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '..', '..');

describe('the server entry', () => {
  it('stops cleanly on a port in use, before printing a development key', async () => {
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('busy') });
    const dir = mkdtempSync(join(tmpdir(), 'ids-serve-'));
    try {
      const r = Bun.spawnSync([process.execPath, join(ROOT, 'entry/bun.ts')], {
        env: {
          ...process.env,
          PORT: String(taken.port),
          HOST: '127.0.0.1',
          DATA_DIR: dir,
          MASTER_KEY: '',
          DATABASE_URL: '',
          NATS_URL: '',
          NODE_ENV: 'development',
          LOG_LEVEL: 'warn',
        },
      });
      const err = r.stderr.toString();
      expect(r.exitCode).toBe(1);
      expect(err).toContain(`cannot listen on 127.0.0.1:${taken.port}`);
      expect(err).not.toContain('Development organization created');
      expect(err).not.toContain('    at ');
    } finally {
      taken.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
