import { afterAll, describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crashDrill } from '../drill/crash.ts';
import { DATABASE_URL, deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function drill(env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'drill-'));
  dirs.push(dir);
  return crashDrill({
    n: 2000,
    env,
    out: join(dir, 'handled.txt'),
  });
}

describe('crash drill on the scale-out adapters', () => {
  it('pg-queue on Postgres loses no message when the consumer is SIGKILLed mid-stream', async () => {
    const pg = await isolatedPostgres('drill');
    try {
      const result = await drill({
        DRILL_DATABASE_URL: DATABASE_URL,
        DRILL_SCHEMA: pg.schema,
        DRILL_TOPIC: 'drill',
      });
      console.log('pg-queue/Postgres drill', result);
      expect(result.handled).toBe(2000);
    } finally {
      await pg.storage.close();
      await pg.drop();
    }
  }, 180_000);

  it('JetStream loses no message when the consumer is SIGKILLed mid-stream', async () => {
    const pg = await isolatedPostgres('drill');
    const prefix = uniquePrefix();
    try {
      const result = await drill({
        DRILL_DATABASE_URL: DATABASE_URL,
        DRILL_SCHEMA: pg.schema,
        DRILL_NATS_URL: NATS_URL,
        DRILL_STREAM_PREFIX: prefix,
        DRILL_TOPIC: 'drill',
      });
      console.log('JetStream drill', result);
      expect(result.handled).toBe(2000);
    } finally {
      await deleteStreams(prefix);
      await pg.storage.close();
      await pg.drop();
    }
  }, 180_000);
});
