import { describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webhookCrashDrill } from './webhooks-crash.ts';

describe('webhook crash drill: the server on PGlite on disk with pg-queue', () => {
  it('loses no delivery when the server is SIGKILLed during a burst and restarted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drill-webhooks-'));
    try {
      // The server inherits this process's environment: a DATABASE_URL or NATS_URL there must not count.
      const result = await webhookCrashDrill({
        env: { DATA_DIR: dir, DATABASE_URL: '', NATS_URL: '' },
        requests: 8,
        perRequest: 50,
      });
      console.log('webhooks pg-queue/PGlite drill', result);
      expect(result.events).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
