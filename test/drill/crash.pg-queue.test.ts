import { describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crashDrill } from './crash.ts';

describe('crash drill: pg-queue on PGlite on disk', () => {
  it('loses no message when the consumer is SIGKILLed mid-stream and restarted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drill-pglite-'));
    try {
      const env = { DRILL_DATA_DIR: dir, DRILL_TOPIC: 'drill' };
      const result = await crashDrill({
        n: 2000,
        env,
        out: join(dir, 'handled.txt'),
      });
      console.log('pg-queue/PGlite drill', result);
      expect(result.handled).toBe(2000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
