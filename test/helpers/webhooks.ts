import { join } from 'node:path';
import type { Env } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { PluginDefinition } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { type WebhooksOptions, webhooks } from '../../plugins/webhooks/index.ts';
import { createWebhookVerifier, type WebhookClaims } from '../../plugins/webhooks/receiver.ts';
import { startTestService, type TestService } from './service.ts';
import { type HttpsReceiver, startHttpsReceiver, testTls } from './tls.ts';

/** Test host names, all mapped to 127.0.0.1 (the test certificate covers *.hooks.test). */
export const HOOK_HOSTS = ['hooks.test', ...'abcdefgh'.split('').map((c) => `${c}.hooks.test`)];

/** The environment that lets deliveries reach loopback receivers with the test certificate. */
export const deliveryEnv = (): Env => ({
  DELIVERY_ALLOW_PRIVATE: '127.0.0.0/8',
  DELIVERY_HOST_MAP: HOOK_HOSTS.map((h) => `${h}=127.0.0.1`).join(','),
  NODE_EXTRA_CA_CERTS: join(testTls().dir, 'ca.pem'),
});

export interface WebhookTestService extends TestService {
  /** The service's base URL on a real port: the JWTs' iss, and where receivers fetch the keys. */
  baseUrl: string;
  /** Verifies a received request with the package's receiver helper (the spec's six checks). */
  verify(
    received: { body: string; url: string },
    expected?: { webhookId?: string; triggerName?: string },
  ): Promise<WebhookClaims>;
}

/**
 * A service with the webhooks plugin, its workers started, served on a loopback port (receivers fetch
 * the verification keys from it) and able to deliver to HTTPS receivers on *.hooks.test.
 */
export async function startWebhookService(
  o: {
    clock?: Clock;
    env?: Env;
    storage?: Storage;
    options?: WebhooksOptions;
    /** Plugins to run beside webhooks (a token issuer, say). */
    plugins?: PluginDefinition[];
    /** Where the service logs. @default none */
    log?: Logger;
  } = {},
): Promise<WebhookTestService> {
  let handler: (r: Request) => Promise<Response> = async () => new Response('starting', { status: 503 });
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => handler(r) });
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const t = await startTestService({
    env: { ...deliveryEnv(), PUBLIC_BASE_URL: baseUrl, ...o.env },
    definition: { plugins: [webhooks(o.options), ...(o.plugins ?? [])] },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.storage ? { storage: o.storage } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  handler = t.service.fetch;
  await t.service.start();
  const verifier = createWebhookVerifier({ baseUrl, orgId: t.org.id });
  return {
    ...t,
    baseUrl,
    async verify(received, expected = {}) {
      return (await verifier.verify(received, expected)).claims;
    },
    async stop() {
      await t.stop();
      await server.stop(true);
    },
  };
}

/** The URL a receiver saw a request at, as the receiver helper compares it with target_url. */
export const receivedUrl = (receiver: HttpsReceiver, path: string, host = 'hooks.test') =>
  receiver.url(path, host);

/** Polls until `cond` holds, or fails naming what it waited for. */
export async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export { startHttpsReceiver };
