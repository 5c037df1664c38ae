import { afterAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { startWebhookService, until, type WebhookTestService } from '../../helpers/webhooks.ts';

const started: Array<WebhookTestService | HttpsReceiver> = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

/** A webhook on `target` with one RoleCreated_v1 trigger, one test event, and its first delivery once it settles. */
async function deliveredOnce(t: WebhookTestService, target: string, settled: string) {
  const created = await t.call('POST', '/organizations/webhooks', {
    body: { name: 'hook', target_url: target },
  });
  await expectStatus(created, 201);
  const id: string = created.json.result.id;
  await expectStatus(
    await t.call('POST', `/organizations/webhooks/${id}/triggers`, {
      body: { trigger_type: 'event', trigger_name: 'RoleCreated_v1' },
    }),
    201,
  );
  await expectStatus(await t.call('POST', '/test-events', { body: [{ event_name: 'RoleCreated_v1' }] }), 201);
  const list = async () =>
    (await t.call('GET', `/organizations/webhooks/${id}/deliveries`)).json.result ?? [];
  await until(async () => (await list())[0]?.[settled] !== undefined, 10_000, `the delivery's ${settled}`);
  return { id, delivery: (await list())[0] };
}

describe('resend rate limit', () => {
  it('answers 429 with Retry-After once an organization has used its resends, recover included', async () => {
    const t = await startWebhookService({ options: { resendRateLimit: { perMinute: 1, burst: 2 } } });
    const rx = startHttpsReceiver(() => new Response('ok'));
    started.push(t, rx);
    const { id, delivery } = await deliveredOnce(t, rx.url('/resend', 'a.hooks.test'), 'settled_at');
    const resend = () => t.call('POST', `/organizations/webhooks/${id}/deliveries/${delivery.id}/resend`);
    await expectStatus(await resend(), 202);
    await expectStatus(
      await t.call('POST', `/organizations/webhooks/${id}/recover`, {
        body: { since: '2020-01-01T00:00:00Z' },
      }),
      202,
    );
    const refused = await resend();
    await expectStatus(refused, 429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.json.errors[0].message).toContain('limited to 1 a minute (bursts of 2)');
  });

  it('limits 100 quick resends by default: most are refused, none is a 500', async () => {
    const t = await startWebhookService();
    const rx = startHttpsReceiver(() => new Response('ok'));
    started.push(t, rx);
    const { id, delivery } = await deliveredOnce(t, rx.url('/many', 'b.hooks.test'), 'settled_at');
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++)
      statuses.push(
        (await t.call('POST', `/organizations/webhooks/${id}/deliveries/${delivery.id}/resend`)).status,
      );
    expect(statuses.filter((s) => s === 202).length).toBeLessThanOrEqual(21);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(79);
    expect(statuses.every((s) => s === 202 || s === 429)).toBe(true);
  });
});

describe('a delivery refused for its address', () => {
  it('tells the tenant the target resolved to a refused address, without the address', async () => {
    // hooks.test maps to 127.0.0.1, and no allowance covers loopback here.
    const t = await startWebhookService({ env: { DELIVERY_ALLOW_PRIVATE: '10.0.0.0/8' } });
    started.push(t);
    const { delivery } = await deliveredOnce(t, 'https://c.hooks.test/refused', 'last_error');
    expect(delivery.attempts[0].error_kind).toBe('ssrf_refused');
    for (const text of [delivery.last_error, delivery.attempts[0].error]) {
      expect(text).toContain('resolves to a refused (non-public) address');
      expect(text).not.toContain('127.0.0.1');
      expect(text).not.toContain('loopback');
    }
  });
});
