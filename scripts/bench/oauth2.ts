/**
 * client_credentials grants over HTTP: the service's POST /oauth2/tokens, a bare Elysia endpoint that
 * only signs an ES256 JWT (the bound), and node-oidc-provider configured for the same grant with ES256
 * JWT access tokens. Each server runs in its own process on this runtime, loaded by the same load
 * generator (a separate process) with the same request: a form with grant_type and scope, HTTP Basic.
 * The servers are loaded in turn, round after round, and each row is the median round: on a shared
 * machine the load of the moment moves every server alike, not whichever happened to run then.
 */
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { IMAGE_RUNTIME_ENV, ROOT, runLoad, startChild } from './processes.ts';
import { startEmbeddedService } from './service-process.ts';
import { fmtMs, fmtRate, row } from './stats.ts';

const FORM = 'grant_type=client_credentials&scope=read';
const formHeaders = (id: string, secret: string) => ({
  'content-type': 'application/x-www-form-urlencoded',
  authorization: `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`,
});

interface Target {
  url: string;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/** One grant answered with a token, before the load: a server that refuses is not measured. */
async function checkGrant(t: Target): Promise<void> {
  const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: FORM });
  const text = await res.text();
  if (res.status !== 200 || !text.includes('"access_token"'))
    throw new Error(`${t.url} answered ${res.status} ${text.slice(0, 300)}`);
}

/** A bare server of oauth2-bare.ts, chosen by its BARE_SIGNER, BARE_READ and BARE_SERVER settings. */
async function bare(settings: {
  BARE_SIGNER?: 'node' | 'jose';
  BARE_READ?: 'form';
  BARE_SERVER?: 'bun';
}): Promise<Target> {
  const child = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/oauth2-bare.ts')],
    { PORT: '0', ...settings, ...IMAGE_RUNTIME_ENV },
    /"port":\d+/,
  );
  const port = child.output().match(/"port":(\d+)/)![1]!;
  return { url: `http://127.0.0.1:${port}/token`, headers: formHeaders('x', 'y'), stop: child.stop };
}

async function oidcProvider(): Promise<Target> {
  const port = String(await freePort());
  const child = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/oauth2-oidc-provider.ts')],
    { PORT: port, NODE_ENV: 'production', CLIENT_SECRET: 'bench-secret', ...IMAGE_RUNTIME_ENV },
    /"port":\d+/,
  );
  return {
    url: `http://127.0.0.1:${port}/token`,
    headers: formHeaders('bench-client', 'bench-secret'),
    stop: child.stop,
  };
}

async function service(): Promise<Target> {
  const started = await startEmbeddedService();
  try {
    const made = (await started.admin('POST', '/oauth2/clients', {
      client_name: 'bench',
      scopes: ['read'],
      grant_types: ['client_credentials'],
    })) as { result: { client_id: string; client_secret: string } };
    const { client_id, client_secret } = made.result;
    return {
      url: `${started.base}/oauth2/tokens`,
      headers: formHeaders(client_id, client_secret),
      stop: started.stop,
    };
  } catch (e) {
    await started.stop();
    throw e;
  }
}

type Result = Awaited<ReturnType<typeof runLoad>>;
const median = (results: Result[]) =>
  [...results].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(results.length / 2)]!;

export async function benchOAuth2(o: { seconds: number; concurrency: number; rounds: number }) {
  const names = [
    'bare Elysia, ES256 sign (node:crypto, on its thread)',
    'bare Elysia, ES256 sign (jose SignJWT: WebCrypto, off its thread)',
    'bare Elysia, reads the form, then ES256 sign (node:crypto)',
    'ceiling: Bun.serve, no framework, reads the form, then ES256 sign (WebCrypto, off its thread)',
    'node-oidc-provider 9 (client_credentials, JWT access tokens)',
    'this service: POST /oauth2/tokens',
  ];
  const targets: Target[] = [];
  try {
    targets.push(
      await bare({ BARE_SIGNER: 'node' }),
      await bare({ BARE_SIGNER: 'jose' }),
      await bare({ BARE_SIGNER: 'node', BARE_READ: 'form' }),
      await bare({ BARE_SERVER: 'bun' }),
      await oidcProvider(),
      await service(),
    );
    for (const t of targets) await checkGrant(t);
    const rounds: Result[][] = targets.map(() => []);
    for (let r = 0; r < o.rounds; r++)
      for (const [i, t] of targets.entries()) {
        const result = await runLoad(t.url, o.concurrency, o.seconds, t.headers, FORM);
        if (result.errors > 0) throw new Error(`${result.errors} grants failed at ${t.url}`);
        rounds[i]!.push(result);
      }
    const [nodeSign, joseSign, , ceiling, provider] = rounds.map(median);
    // The bound: the faster of the two bare signing endpoints in this run.
    const boundIndex = nodeSign!.perSecond >= joseSign!.perSecond ? 0 : 1;
    const bound = boundIndex === 0 ? nodeSign : joseSign;
    const lines = rounds.map((results, i) => {
      const s = median(results);
      return row([
        i === boundIndex ? `bound: ${names[i]!}` : names[i]!,
        fmtRate(s.perSecond),
        fmtMs(s.p50),
        fmtMs(s.p99),
        (s.perSecond / bound!.perSecond).toFixed(2),
        (s.perSecond / provider!.perSecond).toFixed(2),
        results.map((x) => fmtRate(x.perSecond)).join(', '),
      ]);
    });
    return [
      `client_credentials grants: POST with \`grant_type=client_credentials&scope=read\` and HTTP Basic, closed loop, ${o.concurrency} connections, each server in its own Bun process and the load generator (plain keep-alive sockets, scripts/bench/load.ts) in another, on the same two cores. The six servers run side by side and are loaded in turn, ${o.seconds} s each after 1 s of warm-up, for ${o.rounds} rounds; a row is the median round (every round's rate in the last column). Every server runs with MIMALLOC_PURGE_DELAY=${IMAGE_RUNTIME_ENV.MIMALLOC_PURGE_DELAY}, as the container image runs the service. The service authenticates the client (cached; the secret compared in constant time), checks the grant and the scope, and signs an RFC 9068 access token (ES256, WebCrypto: the signature is computed on a thread of Bun's pool, not the event loop's). The bound is the faster of two bare Elysia POSTs that sign one ES256 JWT and nothing else (they never read the request's body), one with node:crypto on the event loop's thread, one with jose (WebCrypto); the row after them reads and parses the form first, the least a token endpoint does; the ceiling does the same with Bun.serve and no framework, signing with WebCrypto directly, the fastest one process of this runtime answers a token request; node-oidc-provider (oidc-provider, NODE_ENV=production) issues ES256 JWT access tokens through its resource indicators. Aims: 10,000 grants/s, 0.60 of the bound, 3 times node-oidc-provider.`,
      '',
      row(['server', 'grants/s', 'p50 ms', 'p99 ms', 'fraction of bound', 'times oidc-provider', 'rounds']),
      row(['---', '---', '---', '---', '---', '---', '---']),
      ...lines,
      '',
      `The ceiling, a server that does nothing but read the form and sign, answered ${(ceiling!.perSecond / provider!.perSecond).toFixed(2)} times node-oidc-provider's grants in this run: a token endpoint does more than it, so three times node-oidc-provider is ${ceiling!.perSecond >= 3 * provider!.perSecond ? 'within' : 'beyond'} what one process of this runtime reaches on this machine.`,
    ].join('\n');
  } finally {
    for (const t of targets) await t.stop();
  }
}
