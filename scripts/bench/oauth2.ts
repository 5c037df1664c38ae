/**
 * client_credentials grants over HTTP: the service's POST /oauth2/tokens, a bare Elysia endpoint that
 * only signs an ES256 JWT (the bound), and node-oidc-provider configured for the same grant with ES256
 * JWT access tokens. Each server runs in its own process on this runtime, loaded by the same load
 * generator (a separate process) with the same request: a form with grant_type and scope, HTTP Basic.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, ROOT, runLoad, startChild } from './processes.ts';
import { fmtMs, fmtRate, row } from './stats.ts';

const FORM = 'grant_type=client_credentials&scope=read';
const formHeaders = (id: string, secret: string) => ({
  'content-type': 'application/x-www-form-urlencoded',
  authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`,
});

async function portOf(child: Child): Promise<string> {
  return child.output().match(/"port":(\d+)/)![1]!;
}

/** One grant answered with a token, before the load: a server that refuses is not measured. */
async function checkGrant(url: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers, body: FORM });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"access_token"'))
    throw new Error(`${url} answered ${res.status} ${text.slice(0, 300)}`);
}

async function measure(
  url: string,
  headers: Record<string, string>,
  o: { seconds: number; concurrency: number },
) {
  await checkGrant(url, headers);
  const result = await runLoad(url, o.concurrency, o.seconds, headers, FORM);
  if (result.errors > 0) throw new Error(`${result.errors} grants failed at ${url}`);
  return result;
}

async function bare(signer: 'node' | 'jose', o: { seconds: number; concurrency: number }) {
  const child = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/oauth2-bare.ts')],
    { PORT: '0', BARE_SIGNER: signer },
    /"port":\d+/,
  );
  try {
    return await measure(`http://127.0.0.1:${await portOf(child)}/token`, formHeaders('x', 'y'), o);
  } finally {
    await child.stop();
  }
}

async function oidcProvider(o: { seconds: number; concurrency: number }) {
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const child = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/oauth2-oidc-provider.ts')],
    { PORT: port, NODE_ENV: 'production', CLIENT_SECRET: 'bench-secret' },
    /"port":\d+/,
  );
  try {
    return await measure(`http://127.0.0.1:${port}/token`, formHeaders('bench-client', 'bench-secret'), o);
  } finally {
    await child.stop();
  }
}

async function service(o: { seconds: number; concurrency: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'ids-bench-oauth2-'));
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const child = await startChild(
    [process.execPath, join(ROOT, 'entry/bun.ts')],
    { PORT: port, DATA_DIR: dir, LOG_LEVEL: 'warn', NODE_ENV: 'development', DATABASE_URL: '', NATS_URL: '' },
    /Service-API-Key: \S+/,
    // A first start makes the embedded database: slow on a busy machine.
    180_000,
  );
  try {
    const base = `http://127.0.0.1:${port}`;
    while (
      !(await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    )
      await Bun.sleep(50);
    const out = child.output();
    const orgId = out.match(/Service-OrgID: (\S+)/)![1]!;
    const apiKey = out.match(/Service-API-Key: (\S+)/)![1]!;
    const made = await fetch(`${base}/oauth2/clients`, {
      method: 'POST',
      headers: { 'Service-OrgID': orgId, 'Service-API-Key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'bench', scopes: ['read'], grant_types: ['client_credentials'] }),
    });
    const text = await made.text();
    if (made.status !== 201) throw new Error(`POST /oauth2/clients answered ${made.status} ${text}`);
    const { client_id, client_secret } = JSON.parse(text).result as {
      client_id: string;
      client_secret: string;
    };
    return await measure(`${base}/oauth2/tokens`, formHeaders(client_id, client_secret), o);
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchOAuth2(o: { seconds: number; concurrency: number }): Promise<string> {
  const bound = await bare('node', o);
  const boundJose = await bare('jose', o);
  const provider = await oidcProvider(o);
  const ours = await service(o);
  const line = (name: string, s: typeof ours) =>
    row([
      name,
      fmtRate(s.perSecond),
      fmtMs(s.p50),
      fmtMs(s.p99),
      (s.perSecond / bound.perSecond).toFixed(2),
      (s.perSecond / provider.perSecond).toFixed(2),
    ]);
  return [
    `client_credentials grants: POST with \`grant_type=client_credentials&scope=read\` and HTTP Basic, closed loop, ${o.concurrency} connections, ${o.seconds} s after 1 s of warm-up, each server in its own Bun process and the load generator in another, on the same two cores. The service authenticates the client (cached; the secret compared in constant time), checks the grant and the scope, and signs an RFC 9068 access token (ES256, node:crypto). The bound is a bare Elysia POST that signs one ES256 JWT and nothing else; node-oidc-provider ${'(oidc-provider, NODE_ENV=production)'} issues ES256 JWT access tokens through its resource indicators. Aims: 10,000 grants/s, 0.60 of the bound, 3 times node-oidc-provider.`,
    '',
    row(['server', 'grants/s', 'p50 ms', 'p99 ms', 'fraction of bound', 'times oidc-provider']),
    row(['---', '---', '---', '---', '---', '---']),
    line('bound: bare Elysia, ES256 sign (node:crypto)', bound),
    line('bare Elysia, ES256 sign (jose SignJWT)', boundJose),
    line('node-oidc-provider 9 (client_credentials, JWT access tokens)', provider),
    line('this service: POST /oauth2/tokens', ours),
  ].join('\n');
}
