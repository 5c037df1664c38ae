import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectStatus } from '../../helpers/expect-status.ts';
import { parsePrometheus } from '../../helpers/prometheus.ts';
import { freePort, startRealEntry } from '../../helpers/real-entry.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { deliveryEnv, until } from '../../helpers/webhooks.ts';

const ROOT = join(import.meta.dir, '..', '..', '..');
const COUNT = 'identity_http_request_duration_seconds_count';

describe('metrics through the real entry, on a port of their own', () => {
  let entry: Awaited<ReturnType<typeof startRealEntry>>;
  let metricsUrl: string;
  let rx: HttpsReceiver;

  beforeAll(async () => {
    const metricsPort = freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}`;
    rx = startHttpsReceiver(() => new Response('ok'));
    entry = await startRealEntry('', {
      METRICS_PORT: String(metricsPort),
      ...(deliveryEnv() as Record<string, string>),
    });
  }, 90_000);
  afterAll(async () => {
    await entry?.stop();
    await rx.stop();
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${entry.base}${path}`, { ...init, headers: { ...entry.headers, ...init.headers } });
  const scrape = async () => {
    const res = await fetch(`${metricsUrl}/metrics`);
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 200);
    return parsePrometheus(text);
  };

  it('serves the API on PORT and the metrics on METRICS_PORT only', async () => {
    await expectStatus(await api('/organizations'), 200);
    await expectStatus(await api(`/nowhere/${crypto.randomUUID()}`), 404);
    await expectStatus(await fetch(`${entry.base}/metrics`), 404);
    await expectStatus(await fetch(`${metricsUrl}/organizations`, { headers: entry.headers }), 404);
    await expectStatus(await fetch(`${metricsUrl}/healthz`), 200);
    const post = await fetch(`${metricsUrl}/metrics`, { method: 'POST' });
    await expectStatus(post, 405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');

    const s = await scrape();
    expect(s.value(COUNT, { method: 'GET', route: '/organizations', status: '200' })).toBe(1);
    expect(s.value(COUNT, { method: 'GET', route: 'none', status: '404' })).toBe(2);
  });

  it('counts an OAuth grant and an event delivered to an HTTPS receiver', async () => {
    const client = await api('/oauth2/clients', {
      method: 'POST',
      body: JSON.stringify({ client_name: 'Entry', scopes: ['read'], grant_types: ['client_credentials'] }),
    });
    await expectStatus(client, 201);
    const { client_id, client_secret } = (await client.json()).result;
    const token = await fetch(`${entry.base}/oauth2/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client_id}:${client_secret}`)}`,
      },
      body: 'grant_type=client_credentials',
    });
    await expectStatus(token, 200);

    const hook = await api('/organizations/webhooks', {
      method: 'POST',
      body: JSON.stringify({ name: 'entry', target_url: rx.url('/entry', 'e.hooks.test') }),
    });
    await expectStatus(hook, 201);
    const hookId = (await hook.json()).result.id;
    await expectStatus(
      await api(`/organizations/webhooks/${hookId}/triggers`, {
        method: 'POST',
        body: JSON.stringify({ trigger_type: 'event', trigger_name: 'RoleCreated_v1' }),
      }),
      201,
    );
    await expectStatus(
      await api('/test-events', { method: 'POST', body: JSON.stringify([{ event_name: 'RoleCreated_v1' }]) }),
      201,
    );
    await until(() => rx.requests.length === 1, 20_000, 'the delivery');

    let s = await scrape();
    await until(
      async () => {
        s = await scrape();
        return s.value('identity_webhook_deliveries_total', { outcome: 'succeeded' }) === 1;
      },
      10_000,
      'the delivery counted',
    );
    expect(s.value('identity_oauth2_tokens_issued_total', { grant_type: 'client_credentials' })).toBe(1);
    expect(s.value(COUNT, { method: 'POST', route: '/oauth2/tokens', status: '200' })).toBe(1);
    expect(s.value('identity_events_published_total', { event_name: 'RoleCreated_v1' })).toBe(1);
    expect(s.value('identity_webhook_delivery_duration_seconds_count', { outcome: 'succeeded' })).toBe(1);
    expect(s.value('identity_queue_depth', { topic: 'webhook-deliveries' })).toBe(0);
  });

  it('closes the metrics listener on shutdown', async () => {
    expect(await entry.stop()).toBe(0);
    const refused = await fetch(`${metricsUrl}/healthz`).then(
      () => 'answered',
      () => 'refused',
    );
    expect(refused).toBe('refused');
  });
});

describe('the server entry with METRICS_PORT taken', () => {
  it('stops with one line naming METRICS_PORT, before making a data directory', () => {
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('busy') });
    const dir = mkdtempSync(join(tmpdir(), 'ids-metrics-'));
    try {
      const r = Bun.spawnSync([process.execPath, join(ROOT, 'entry/bun.ts')], {
        env: {
          ...process.env,
          PORT: String(freePort()),
          HOST: '127.0.0.1',
          METRICS_PORT: String(taken.port),
          DATA_DIR: join(dir, 'data'),
          MASTER_KEY: '',
          DATABASE_URL: '',
          NATS_URL: '',
          NODE_ENV: 'development',
        },
      });
      const err = r.stderr.toString();
      expect(r.exitCode).toBe(1);
      expect(err).toContain(
        `cannot listen on 127.0.0.1:${taken.port}: the port is in use (set METRICS_PORT or stop the other server)`,
      );
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(existsSync(join(dir, 'data'))).toBe(false);
    } finally {
      taken.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
