import { type Env, loadConfig } from '../../core/config.ts';
import type { Logger } from '../../core/log.ts';
import type { MessageCounters } from '../../core/messaging/counters.ts';
import type { ServiceDefinition } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { createService } from '../../entry/create-service.ts';
import { freshPglite } from './pglite.ts';
import { testOutboundEnv } from './tls.ts';

export const TEST_MASTER_KEY = `test:${btoa('m'.repeat(32))}`;

export interface CallOptions {
  body?: unknown;
  /** A raw body sent as is (no JSON encoding, no content-type). */
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** The API key to send; null sends none. @default the test organization's key */
  key?: string | null;
  /** The organization to name; null sends no OrgID header. @default the test organization */
  orgId?: string | null;
  /** The socket address the request comes from, as a server would report it. @default none (in-process) */
  peer?: string;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response JSON
  json: any;
}

/**
 * A whole service on an in-memory PGlite (from the migrated base dump) with one organization, driven
 * with `app.handle`: no port opened.
 */
export async function startTestService(
  options: {
    env?: Env;
    definition?: ServiceDefinition;
    clock?: Clock;
    storage?: Storage;
    /** Where the service logs. @default none (LOG_LEVEL silent) */
    log?: Logger;
    messageCounters?: MessageCounters;
  } = {},
) {
  // The test OpenID provider is an SSO provider on loopback, over https with the test CA; a test's own
  // host map is added to its name, and its SSO_ALLOW_PRIVATE ('' for none) wins.
  const outbound = testOutboundEnv(options.env?.DELIVERY_HOST_MAP);
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: TEST_MASTER_KEY,
    PUBLIC_BASE_URL: 'https://ids.test',
    ...outbound,
    ...options.env,
    DELIVERY_HOST_MAP: outbound.DELIVERY_HOST_MAP,
  });
  const storage = options.storage ?? (await freshPglite());
  const service = await createService(config, {
    overrides: { storage, ...(options.clock ? { clock: options.clock } : {}) },
    ...(options.definition ? { definition: options.definition } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.messageCounters ? { messageCounters: options.messageCounters } : {}),
  });
  const { organization, apiKey } = await service.ctx.orgs.create('Acme');
  const names = service.ctx.headers;

  async function call(method: string, path: string, o: CallOptions = {}): Promise<CallResult> {
    const headers = new Headers(o.headers);
    const orgId = o.orgId === undefined ? organization.id : o.orgId;
    const key = o.key === undefined ? apiKey : o.key;
    if (orgId !== null) headers.set(names.orgId, orgId);
    if (key !== null) headers.set(names.apiKey, key);
    let body: BodyInit | undefined = o.raw;
    if (o.body !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(o.body);
    }
    const res = await service.fetchFrom(
      new Request(`http://localhost${path}`, { method, headers, ...(body !== undefined ? { body } : {}) }),
      o.peer,
    );
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  return { service, config, org: organization, apiKey, names, call, stop: () => service.stop() };
}

export type TestService = Awaited<ReturnType<typeof startTestService>>;
