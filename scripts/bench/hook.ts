/**
 * The token_minted hook's cost on a sign-in: tokens issued one after another through the miniature
 * issuer (test/helpers/token-issuer.ts, which runs beforeTokenIssued as the tokens plugin does), first
 * for an organization without webhooks, then for one with a token_minted webhook whose receiver, in a
 * process of its own, answers 204 at once. The difference is what the hook adds over the receiver's own
 * time; the bound beside it is one raw HTTPS POST to the same receiver through the delivery adapter.
 */
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { createFetchDelivery } from '../../adapters/fetch-delivery/index.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { createService } from '../../entry/create-service.ts';
import { webhooks } from '../../plugins/webhooks/index.ts';
import { freshPglite } from '../../test/helpers/pglite.ts';
import { testTls } from '../../test/helpers/tls.ts';
import { tokenIssuerPlugin } from '../../test/helpers/token-issuer.ts';
import { ROOT } from './processes.ts';
import { fmtMs, row, summarize } from './stats.ts';

async function receiverProcess() {
  let onPort: (port: number) => void = () => {};
  const ready = new Promise<number>((r) => {
    onPort = r;
  });
  const child = Bun.spawn([process.execPath, join(ROOT, 'scripts/bench/webhook-receiver.ts')], {
    stdout: 'inherit',
    stderr: 'inherit',
    ipc: (m: { port?: number }) => m.port && onPort(m.port),
  });
  return { port: await ready, stop: () => child.kill() };
}

/** p50/p99 of `fn` run `n` times in a row after `warm` runs. */
async function timed(n: number, warm: number, fn: () => Promise<void>) {
  for (let i = 0; i < warm; i++) await fn();
  const latencies: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn();
    latencies.push(performance.now() - s);
  }
  return summarize(latencies, performance.now() - t0);
}

export async function benchHook(o: { n: number }): Promise<string> {
  const rx = await receiverProcess();
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: 'https://ids.bench',
    DELIVERY_ALLOW_PRIVATE: '127.0.0.0/8',
    DELIVERY_HOST_MAP: 'hooks.test=127.0.0.1',
    NODE_EXTRA_CA_CERTS: join(testTls().dir, 'ca.pem'),
  });
  const service = await createService(config, {
    overrides: { storage: await freshPglite() },
    definition: { plugins: [webhooks(), tokenIssuerPlugin] },
  });
  await service.start();
  const names = service.ctx.headers;
  async function org(withHook: boolean) {
    const { organization, apiKey } = await service.ctx.orgs.create(withHook ? 'hooked' : 'plain');
    const headers = {
      [names.orgId]: organization.id,
      [names.apiKey]: apiKey,
      'content-type': 'application/json',
    };
    const post = async (path: string, body?: unknown) => {
      const r = await service.fetch(
        new Request(`http://localhost${path}`, { method: 'POST', headers, body: JSON.stringify(body ?? {}) }),
      );
      if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r.json();
    };
    if (withHook) {
      const target = `https://hooks.test:${rx.port}/mint`;
      const made = await post('/organizations/webhooks', { name: 'bench', target_url: target });
      await post(`/organizations/webhooks/${made.result.id}/triggers`, {
        trigger_type: 'sync_hook',
        trigger_name: 'token_minted',
      });
    }
    return () => post('/issue').then(() => undefined);
  }
  const delivery = createFetchDelivery({
    allowPrivate: ['127.0.0.0/8'],
    hostMap: { 'hooks.test': '127.0.0.1' },
    extraCaPem: testTls().caPem,
    log: createLogger('silent'),
  });
  try {
    const warm = Math.min(500, o.n);
    const plain = await timed(o.n, warm, await org(false));
    const hooked = await timed(o.n, warm, await org(true));
    const raw = await timed(o.n, warm, async () => {
      const r = await delivery.post({
        url: `https://hooks.test:${rx.port}/raw`,
        headers: { 'content-type': 'application/octet-stream' },
        body: 'x'.repeat(700),
        timeoutMs: 10_000,
      });
      if (!r.ok) throw new Error(`raw POST failed: ${r.error ?? r.status}`);
    });
    const lines = [
      row(['PGlite, one at a time', 'p50 ms', 'p99 ms']),
      row(['---', '---', '---']),
      row(['sign-in, no token_minted webhook', fmtMs(plain.p50), fmtMs(plain.p99)]),
      row(['sign-in, one token_minted webhook', fmtMs(hooked.p50), fmtMs(hooked.p99)]),
      row(['**added by the hook** (aim p50 < 3 ms)', fmtMs(hooked.p50 - plain.p50), '-']),
      row(['bound: one raw HTTPS POST to the receiver', fmtMs(raw.p50), fmtMs(raw.p99)]),
    ];
    await Bun.sleep(200); // the delivery log's last group commit
    const [{ n } = { n: 0 }] = await service.ctx.storage.query<{ n: number }>(
      sql`select count(*)::int as n from webhook_deliveries where trigger_type = 'sync_hook' and status = 'succeeded'`,
    );
    return `${lines.join('\n')}\n\n${o.n} sign-ins each (after ${warm} to warm up); the receiver answers 204 at once in its own process; ${n} hook calls recorded as succeeded in the delivery log.`;
  } finally {
    await delivery.close();
    await service.stop();
    rx.stop();
  }
}
