/**
 * SSO provider credentials: create (validation, seal of the client secret, one INSERT) and read (one
 * SELECT by organization and client ID) through `service.fetch`, on PGlite and on Postgres.
 */
import postgres from 'postgres';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { loadConfig } from '../../core/config.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { createService } from '../../entry/create-service.ts';
import { sso } from '../../plugins/sso/index.ts';
import { rate } from './attributes.ts';
import { measureCallbacks } from './sso-signin-callback.ts';
import { fmtMs, fmtRate, row, type Summary } from './stats.ts';

const PATH = '/organizations/sso/oidc/provider-credentials';

async function serviceOn(storage: Storage) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
  });
  const service = await createService(config, { overrides: { storage }, definition: { plugins: [sso()] } });
  const { organization, apiKey } = await service.ctx.orgs.create('bench');
  const h = service.ctx.headers;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await service.fetch(
      new Request(`http://localhost${path}`, {
        method,
        headers: { [h.orgId]: organization.id, [h.apiKey]: apiKey, 'content-type': 'application/json' },
        ...(body ? { body: JSON.stringify(body) } : {}),
      }),
    );
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
  };
  return { service, call };
}

async function measure(storage: Storage, label: string, o: { seconds: number; inflight: number }) {
  const { service, call } = await serviceOn(storage);
  let n = 0;
  const run = crypto.randomUUID().slice(0, 8);
  const create = () =>
    call('POST', PATH, {
      client_id: `bench-${run}-${n++}.apps.googleusercontent.com`,
      client_secret: 'GOCSPX-bench-secret-0123456789',
      provider: 'google',
      label: 'bench',
      options: { google: { authorize_scopes: ['openid', 'email'] } },
    });
  const created = await rate(create, o.inflight, o.seconds * 1000);
  const made = n;
  const read = await rate(
    (w) => call('GET', `${PATH}/bench-${run}-${(w * 7919) % made}.apps.googleusercontent.com`),
    o.inflight,
    o.seconds * 1000,
  );
  await service.stop();
  const line = (what: string, s: Summary) =>
    row([`${what} on ${label}, ${o.inflight} in flight`, fmtRate(s.perSecond), fmtMs(s.p50), fmtMs(s.p99)]);
  return [line('create', created), line('read', read)];
}

export async function benchSso(o: {
  seconds: number;
  inflight: number;
  callbacks: number;
  databaseUrl?: string;
}): Promise<string> {
  const lines = await measure(await createPgliteStorage(), 'PGlite', o);
  if (o.databaseUrl) {
    const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const storage = await createPostgresStorage({ url: o.databaseUrl, schema, max: o.inflight });
    lines.push(...(await measure(storage, 'Postgres', o)));
    const sql = postgres(o.databaseUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema ${schema} cascade`);
    await sql.end();
  }
  const callbacks = await measureCallbacks(o.callbacks);
  const pct = (xs: number[], p: number) =>
    [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? 0;
  return [
    `A create validates the body and the provider's options, seals the client secret (AES-GCM) and inserts one row; a read selects one row by organization and client ID (no secret opened). Requests go through \`service.fetch\` in this process, ${o.seconds} s per row.`,
    '',
    row(['operation', 'operations/s', 'p50 ms', 'p99 ms']),
    row(['---', '---', '---', '---']),
    ...lines,
    '',
    `Sign-in callback (PGlite): ${o.callbacks} sign-ins through the generic OIDC provider against oidc-provider on loopback, one at a time, half creating the person and half finding it. The callback exchanges the code, verifies the ID token, finds or creates the person, runs beforeTokenIssued, signs the token and records the events; "own" is its wall time less the time the provider spent answering its token and JWKS requests.`,
    '',
    row(['callback', 'p50 ms', 'p99 ms']),
    row(['---', '---', '---']),
    row(['own time', fmtMs(pct(callbacks.own, 0.5)), fmtMs(pct(callbacks.own, 0.99))]),
    row(['with the provider', fmtMs(pct(callbacks.total, 0.5)), fmtMs(pct(callbacks.total, 0.99))]),
  ].join('\n');
}
