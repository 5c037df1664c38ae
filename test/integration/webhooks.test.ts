import { afterAll, describe, expect, it } from 'bun:test';
import { scaledClock } from '../../adapters/clock/system.ts';
import { webhookCrashDrill } from '../drill/webhooks-crash.ts';
import { startWebhookService, type WebhookTestService } from '../helpers/webhooks.ts';
import { deliverySuite, RATE } from '../unit/webhooks/delivery.suite.ts';
import { DATABASE_URL, deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

/** A webhook service on a Postgres schema of its own, with pg-queue or (given a prefix) JetStream. */
async function onPostgres(streamPrefix?: string): Promise<WebhookTestService> {
  const pg = await isolatedPostgres('webhooks');
  const t = await startWebhookService({
    clock: scaledClock(RATE),
    storage: pg.storage,
    env: streamPrefix ? { NATS_URL, NATS_STREAM_PREFIX: streamPrefix } : {},
  });
  cleanups.push(async () => {
    await pg.drop();
    if (streamPrefix) await deleteStreams(streamPrefix);
  });
  return t;
}

describe('webhooks on Postgres', () => {
  it('keeps target_url unique under concurrent creates on a connection pool: one 201, the rest 409', async () => {
    const t = await onPostgres();
    try {
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          t.call('POST', '/organizations/webhooks', {
            body: { name: `racer ${i}`, target_url: 'https://a.hooks.test/contended' },
          }),
        ),
      );
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(49);
      expect(answers.find((r) => r.status === 409)!.json.errors[0].message).toContain(
        'already has the target_url',
      );
    } finally {
      await t.stop();
    }
  });
});

deliverySuite('pg-queue on Postgres', () => onPostgres());
deliverySuite('JetStream, outbox on Postgres', () => onPostgres(uniquePrefix()));

describe('webhook crash drill on the scale-out adapters', () => {
  it('pg-queue on Postgres loses no delivery when the server is SIGKILLed during a burst', async () => {
    const pg = await isolatedPostgres('drillwh');
    await pg.storage.close();
    try {
      const result = await webhookCrashDrill({
        // NATS_URL empty: the server inherits this process's environment, which names NATS in CI.
        env: { DATABASE_URL, DATABASE_SCHEMA: pg.schema, NATS_URL: '' },
        requests: 10,
        perRequest: 50,
      });
      console.log('webhooks pg-queue/Postgres drill', result);
      expect(result.events).toBeGreaterThan(0);
    } finally {
      await pg.drop();
    }
  }, 240_000);

  it('JetStream loses no delivery when the server is SIGKILLed during a burst', async () => {
    const pg = await isolatedPostgres('drillwh');
    await pg.storage.close();
    const prefix = uniquePrefix();
    try {
      const result = await webhookCrashDrill({
        env: { DATABASE_URL, DATABASE_SCHEMA: pg.schema, NATS_URL, NATS_STREAM_PREFIX: prefix },
        requests: 10,
        perRequest: 50,
      });
      console.log('webhooks JetStream drill', result);
      expect(result.events).toBeGreaterThan(0);
    } finally {
      await deleteStreams(prefix);
      await pg.drop();
    }
  }, 240_000);
});
