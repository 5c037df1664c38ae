import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { oauth2 } from '../../../plugins/oauth2/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { identityPlugins } from '../../helpers/identity-service.ts';
import { capturingLogger } from '../../helpers/mail.ts';
import { parsePrometheus, type Scrape } from '../../helpers/prometheus.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { startWebhookService, until, type WebhookTestService } from '../../helpers/webhooks.ts';

const DURATION = 'identity_http_request_duration_seconds';

describe('the metrics of a service, scraped in process', () => {
  let t: WebhookTestService;
  const receivers: HttpsReceiver[] = [];
  const log = capturingLogger();

  beforeAll(async () => {
    // Any METRICS_PORT turns metrics on; in process no listener opens, the handler is called directly.
    t = await startWebhookService({
      plugins: [...identityPlugins(), oauth2()],
      env: { METRICS_PORT: '0' },
      log,
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await t.stop();
  });

  async function scrape(): Promise<Scrape> {
    const res = await t.service.metricsFetch!(new Request('http://127.0.0.1/metrics'));
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheus(text);
  }
  /** What a series gained between two scrapes (absent counts as 0). */
  const gained = (before: Scrape, after: Scrape, name: string, labels: Record<string, string>) =>
    (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
  const receiver = (handler: () => Response) => {
    const r = startHttpsReceiver(handler);
    receivers.push(r);
    return r;
  };

  it('counts requests by method, route pattern and status with their latency, never by path', async () => {
    const before = await scrape();
    await expectStatus(await t.call('GET', '/organizations'), 200);
    const ids = [crypto.randomUUID(), crypto.randomUUID()];
    for (const id of ids) await expectStatus(await t.call('GET', `/persons/${id}`), 404);
    await expectStatus(await t.call('GET', `/no/such/route/${ids[0]}`), 404);
    await expectStatus(await t.call('GET', '/organizations', { key: 'isk_wrong' }), 401);
    const after = await scrape();

    const count = `${DURATION}_count`;
    expect(after.types.get(DURATION)).toBe('histogram');
    expect(gained(before, after, count, { method: 'GET', route: '/organizations', status: '200' })).toBe(1);
    expect(gained(before, after, count, { method: 'GET', route: '/organizations', status: '401' })).toBe(1);
    expect(gained(before, after, count, { method: 'GET', route: '/persons/:person_id', status: '404' })).toBe(
      2,
    );
    expect(gained(before, after, count, { method: 'GET', route: 'none', status: '404' })).toBe(1);
    // The latency: every observation falls in a bucket, +Inf holds them all, and the sum is positive.
    const series = { method: 'GET', route: '/persons/:person_id', status: '404' };
    expect(after.value(`${DURATION}_bucket`, { ...series, le: '+Inf' })).toBe(after.value(count, series)!);
    expect(after.value(`${DURATION}_bucket`, { ...series, le: '10' })).toBe(after.value(count, series)!);
    expect(after.value(`${DURATION}_sum`, series)).toBeGreaterThan(0);
    // No label anywhere carries a path or an id a client sent.
    const values = after.samples.flatMap((s) => Object.values(s.labels));
    for (const id of ids) expect(values.some((v) => v.includes(id))).toBe(false);
  });

  it('does not serve /metrics on the public port', async () => {
    const before = await scrape();
    await expectStatus(await t.call('GET', '/metrics'), 404);
    await expectStatus(await t.call('GET', '/metrics', { key: null, orgId: null }), 404);
    const after = await scrape();
    expect(gained(before, after, `${DURATION}_count`, { method: 'GET', route: 'none', status: '404' })).toBe(
      2,
    );
  });

  it('counts access tokens by grant type, and logs the grant with the client organization', async () => {
    const made = await t.call('POST', '/oauth2/clients', {
      body: { client_name: 'Metrics', scopes: ['read'], grant_types: ['client_credentials'] },
    });
    await expectStatus(made, 201);
    const { client_id, client_secret } = made.json.result;
    const before = await scrape();
    const res = await t.service.fetch(
      new Request('http://localhost/oauth2/tokens', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`${client_id}:${client_secret}`)}`,
        },
        body: 'grant_type=client_credentials',
      }),
    );
    await expectStatus(res, 200);
    const after = await scrape();
    expect(
      gained(before, after, 'identity_oauth2_tokens_issued_total', { grant_type: 'client_credentials' }),
    ).toBe(1);
    expect(
      gained(before, after, `${DURATION}_count`, { method: 'POST', route: '/oauth2/tokens', status: '200' }),
    ).toBe(1);
    const line = log.lines.find(
      (l) => l.msg === 'request' && l.request_id === res.headers.get('x-request-id'),
    );
    expect(line).toMatchObject({ path: '/oauth2/tokens', status: 200, org_id: t.org.id });
  });

  it('counts an event published, its deliveries by outcome with their latency, and the queue waiting to retry', async () => {
    const ok = receiver(() => new Response('ok'));
    const failing = receiver(() => new Response('unavailable', { status: 503 }));
    for (const [i, rx] of [ok, failing].entries()) {
      const made = await t.call('POST', '/organizations/webhooks', {
        body: { name: `metrics ${i}`, target_url: rx.url(`/metrics-${i}`, 'c.hooks.test') },
      });
      await expectStatus(made, 201);
      await expectStatus(
        await t.call('POST', `/organizations/webhooks/${made.json.result.id}/triggers`, {
          body: { trigger_type: 'event', trigger_name: 'RoleCreated_v1' },
        }),
        201,
      );
    }
    const before = await scrape();
    await expectStatus(
      await t.call('POST', '/test-events', { body: [{ event_name: 'RoleCreated_v1' }] }),
      201,
    );
    await until(() => ok.requests.length === 1 && failing.requests.length === 1, 15_000, 'both deliveries');
    let after = before;
    await until(
      async () => {
        after = await scrape();
        return gained(before, after, 'identity_webhook_deliveries_total', { outcome: 'retried' }) === 1;
      },
      10_000,
      'the failed attempt counted',
    );
    expect(gained(before, after, 'identity_events_published_total', { event_name: 'RoleCreated_v1' })).toBe(
      1,
    );
    expect(gained(before, after, 'identity_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1);
    expect(gained(before, after, 'identity_webhook_deliveries_total', { outcome: 'dropped' })).toBe(0);
    const latency = 'identity_webhook_delivery_duration_seconds';
    expect(gained(before, after, `${latency}_count`, { outcome: 'succeeded' })).toBe(1);
    expect(gained(before, after, `${latency}_count`, { outcome: 'retried' })).toBe(1);
    expect(after.value(`${latency}_sum`, { outcome: 'succeeded' })).toBeGreaterThan(0);

    // The failed delivery waits a minute for its retry: it is the queue's depth and its oldest message.
    expect(after.types.get('identity_queue_depth')).toBe('gauge');
    expect(after.value('identity_queue_depth', { topic: 'webhook-deliveries' })).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    const later = await scrape();
    expect(later.value('identity_queue_oldest_age_seconds', { topic: 'webhook-deliveries' })).toBeGreaterThan(
      0.05,
    );
    expect(later.value('identity_queue_depth', { topic: 'events' })).toBe(0);
    expect(later.value('identity_queue_oldest_age_seconds', { topic: 'events' })).toBe(0);
  });

  it('counts identity tokens by issuer, and the token_minted hook by outcome with its latency and failures', async () => {
    const { organization, apiKey } = await t.service.ctx.orgs.create('Hooked');
    const as: CallOptions = { orgId: organization.id, key: apiKey };
    const hook = async (rx: HttpsReceiver, n: number) => {
      const made = await t.call('POST', '/organizations/webhooks', {
        ...as,
        body: { name: `mint ${n}`, target_url: rx.url(`/mint-${n}`, 'd.hooks.test') },
      });
      await expectStatus(made, 201);
      await expectStatus(
        await t.call('POST', `/organizations/webhooks/${made.json.result.id}/triggers`, {
          ...as,
          body: { trigger_type: 'sync_hook', trigger_name: 'token_minted' },
        }),
        201,
      );
    };
    const anonymous = () => t.call('POST', '/persons/anonymous', { ...as, key: null });
    const hooks = 'identity_token_minted_hook_duration_seconds_count';
    const tokens = 'identity_tokens_issued_total';

    await hook(
      receiver(() => Response.json({ plan: 'pro' })),
      1,
    );
    const before = await scrape();
    const first = await anonymous();
    await expectStatus(first, 201);
    await expectStatus(
      await t.call('POST', `/persons/${first.json.result.person_id}/mint-token`, { ...as, body: {} }),
      201,
    );
    const passed = await scrape();
    expect(gained(before, passed, tokens, { issuer: 'anonymous' })).toBe(1);
    expect(gained(before, passed, tokens, { issuer: 'mint' })).toBe(1);
    expect(gained(before, passed, hooks, { outcome: 'passed' })).toBe(1);

    await hook(
      receiver(() => new Response('no', { status: 500 })),
      2,
    );
    await expectStatus(await anonymous(), 403);
    const blocked = await scrape();
    expect(gained(passed, blocked, hooks, { outcome: 'blocked' })).toBe(1);
    expect(gained(passed, blocked, tokens, { issuer: 'anonymous' })).toBe(0);
    expect(
      gained(passed, blocked, 'identity_token_minted_hook_failures_total', { reason: 'http_status' }),
    ).toBe(1);
    expect(
      blocked.value('identity_token_minted_hook_duration_seconds_sum', { outcome: 'blocked' }),
    ).toBeGreaterThan(
      0.1, // three attempts, 100 ms apart
    );
  });

  it('counts messages sent, by kind', async () => {
    const handle = { type: 'email_address', value: 'metrics@example.com' };
    await expectStatus(await t.call('POST', '/persons', { body: { handles: [handle] } }), 201);
    const before = await scrape();
    await expectStatus(
      await t.call('POST', '/authenticate/password/reset', { key: null, body: { handle } }),
      202,
    );
    const sent = { outcome: 'sent', kind: 'password-reset' };
    let after = before;
    await until(
      async () => {
        after = await scrape();
        return gained(before, after, 'identity_messages_total', sent) === 1;
      },
      15_000,
      'the reset message counted as sent',
    );
    expect(gained(before, after, 'identity_events_published_total', { event_name: 'PersonCreated_v1' })).toBe(
      0,
    );
    expect(
      after.value('identity_events_published_total', { event_name: 'PersonCreated_v1' }),
    ).toBeGreaterThan(0);
  });
});
