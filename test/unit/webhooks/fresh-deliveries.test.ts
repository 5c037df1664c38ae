import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createFreshDeliveries } from '../../../plugins/webhooks/pipeline/fresh-deliveries.ts';
import {
  createDeliveryLoader,
  createEventCache,
  type DeliveryToAttempt,
} from '../../../plugins/webhooks/pipeline/loader.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { startWebhookService, until, type WebhookTestService } from '../../helpers/webhooks.ts';

const stale = (id: string): DeliveryToAttempt => ({
  id,
  orgId: '00000000-0000-7000-8000-000000000001',
  webhookId: '00000000-0000-7000-8000-000000000002',
  eventId: '00000000-0000-7000-8000-000000000003',
  triggerType: 'event',
  triggerName: 'RoleCreated_v1',
  status: 'pending',
  attempts: 0,
  firstAttemptAt: null,
  webhook: { targetUrl: 'https://stale.hooks.test/old', customHeaders: null, timeoutNs: null },
  content: { stale: true },
});

describe('fresh deliveries', () => {
  it('answers an entry once, and forgets the oldest beyond its limit', () => {
    const fresh = createFreshDeliveries(2);
    fresh.put(stale('a'));
    fresh.put(stale('b'));
    fresh.put(stale('c'));
    expect(fresh.take('a')).toBeUndefined();
    expect(fresh.take('b')?.id).toBe('b');
    expect(fresh.take('b')).toBeUndefined();
    expect(fresh.take('c')?.id).toBe('c');
  });
});

describe('the delivery loader with fresh deliveries', () => {
  let t: WebhookTestService;
  let rx: HttpsReceiver;
  let deliveryId: string;
  let target: string;

  beforeAll(async () => {
    t = await startWebhookService();
    rx = startHttpsReceiver(() => new Response('down', { status: 500 }));
    target = rx.url('/fresh', 'hooks.test');
    const hook = await t.call('POST', '/organizations/webhooks', {
      body: { name: 'fresh', target_url: target },
    });
    await expectStatus(hook, 201);
    const id: string = hook.json.result.id;
    const trigger = await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
      body: { trigger_type: 'event', trigger_name: 'RoleCreated_v1' },
    });
    await expectStatus(trigger, 201);
    await expectStatus(
      await t.call('POST', '/test-events', { body: [{ event_name: 'RoleCreated_v1' }] }),
      201,
    );
    await until(() => rx.requests.length >= 1, 10_000, 'the first attempt');
    let row: { id: string; attempts: number } | undefined;
    await until(
      async () => {
        [row] = await t.service.ctx.storage.query<{ id: string; attempts: number }>(
          sql`select id, attempts from webhook_deliveries where webhook_id = ${id}`,
        );
        return Number(row?.attempts) === 1;
      },
      10_000,
      'the first attempt recorded',
    );
    deliveryId = row!.id;
  });
  afterAll(async () => {
    await rx.stop();
    await t.stop();
  });

  it('starts a first attempt from the fresh entry, and reads the database for any other', async () => {
    const fresh = createFreshDeliveries();
    const loader = createDeliveryLoader(t.service.ctx.storage, createEventCache(), fresh);
    fresh.put(stale(deliveryId));
    // A retry (the first attempt ran elsewhere, or before a crash) never takes what a router left.
    const retry = await loader.load(deliveryId, 2);
    expect(retry).toMatchObject({ id: deliveryId, attempts: 1, status: 'retrying' });
    expect(retry?.webhook?.targetUrl).toBe(target);
    // The message's first attempt in the process whose router made it: no read.
    expect(await loader.load(deliveryId, 1)).toEqual(stale(deliveryId));
    // Taken once: the same message again reads the database.
    expect((await loader.load(deliveryId, 1))?.attempts).toBe(1);
  });
});
