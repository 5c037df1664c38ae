/**
 * Silent authorizations with a sign-in session, over HTTP: a browser signed in once (its session cookie)
 * sends GET /oauth2/authorize with prompt=none and PKCE, gets a 302 to the client with a code and no
 * page, and the client's back end exchanges the code (client_secret_basic). The service (the real entry
 * in its own process, on its embedded PGlite, and on Postgres when given a database) beside
 * node-oidc-provider doing the same in its own process (scripts/bench/oidc-provider-sessions.ts), and
 * beside the service's password round trip (the page, the form with its argon2id check, the exchange).
 * The servers are loaded in turn, round after round, and a row is its median round, as the oauth2
 * section does; each row also counts the server process's CPU time per authorization.
 *
 * `npm run bench -- sessions`.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { freePort } from '../free-port.ts';
import { cpuSeconds } from './cpu.ts';
import { IMAGE_RUNTIME_ENV, ROOT, startChild } from './processes.ts';
import { type ServiceProcess, startEmbeddedService, startPostgresService } from './service-process.ts';
import { fmtMs, fmtRate, percentile, row } from './stats.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';
const SCOPE = 'openid read';
const PASSWORD = 'correct horse battery staple';
const WARM_UP = 30;

/** The cookies of one browser, sent back to the server they came from (paths aside: one server each). */
class Browser {
  private readonly cookies = new Map<string, string>();
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [k, v] = a.trim().split('=', 2);
        const key = k!.toLowerCase();
        return (key === 'max-age' && Number(v) <= 0) || (key === 'expires' && Date.parse(v!) < Date.now());
      });
      if (expired || !value) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
  has(prefix: string): boolean {
    return [...this.cookies.keys()].some((n) => n.startsWith(prefix));
  }
}

async function pkce() {
  const verifier = `${crypto.randomUUID()}${crypto.randomUUID()}`.replaceAll('-', '');
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const challenge = btoa(String.fromCharCode(...d))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
  return { verifier, challenge };
}

/** The authorization request's query, as a client builds it: state, nonce, PKCE. */
function authorizeQuery(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: SCOPE,
    state: crypto.randomUUID(),
    nonce: crypto.randomUUID(),
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
}

/** The code of a redirect to the client, or a throw naming what came instead. */
async function codeOf(res: Response, what: string): Promise<string> {
  const text = await res.text();
  const location = res.headers.get('location') ?? '';
  const code = location.startsWith(REDIRECT) ? new URL(location).searchParams.get('code') : null;
  if ((res.status !== 302 && res.status !== 303) || !code)
    throw new Error(`${what} answered ${res.status} ${location} ${text.slice(0, 300)}`);
  return code;
}

/** Timings (ms) of one authorization: the browser's part, then the code exchange. */
interface Legs {
  authorize: number;
  exchange: number;
}

/** A server measured: the token request, and the silent authorization of worker `w`'s browser. */
interface Target {
  name: string;
  /** The server's processes, whose CPU time is counted. */
  pids(): number[];
  /** Signs `browsers` browsers in (one session each), before the measure. */
  signIn(browsers: number): Promise<void>;
  silent(w: number): Promise<Legs>;
  /** The service's password round trip with a fresh browser (page, form, exchange). */
  password?: () => Promise<Legs>;
  stop(): Promise<void>;
}

/** The client's back end: the code exchanged with HTTP Basic; the answer must carry an ES256 ID token. */
function exchanger(tokenUrl: string, clientId: string, secret: string) {
  const authorization = `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`)}`;
  return async (code: string, verifier: string, check = false) => {
    const res = await fetch(tokenUrl, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
    });
    const text = await res.text();
    if (res.status !== 200 || !text.includes('"id_token"'))
      throw new Error(`${tokenUrl} answered ${res.status} ${text.slice(0, 300)}`);
    if (check) {
      const body = JSON.parse(text) as Record<string, string>;
      const alg = decodeProtectedHeader(body.id_token!).alg;
      if (alg !== 'ES256' || !body.access_token || !body.refresh_token)
        throw new Error(`${tokenUrl}: an ID token signed ${alg}, or no access or refresh token: ${text}`);
    }
  };
}

/** A silent authorization of `browser`, timed by leg. */
async function silentPair(
  browser: Browser,
  authorizeUrl: string,
  clientId: string,
  exchange: ReturnType<typeof exchanger>,
): Promise<Legs> {
  const { verifier, challenge } = await pkce();
  const url = `${authorizeUrl}?${authorizeQuery(clientId, challenge, { prompt: 'none' })}`;
  const t0 = performance.now();
  const code = await codeOf(await browser.fetch(url), 'prompt=none');
  const t1 = performance.now();
  await exchange(code, verifier);
  return { authorize: t1 - t0, exchange: performance.now() - t1 };
}

/** Limits against guessing and floods, not what this measures (one address sends everything). */
const UNLIMITED = {
  OAUTH2_AUTHORIZE_RATE_LIMIT: '1000000/1000000',
  PASSWORD_HANDLE_RATE_LIMIT: '1000000/1000000',
  PASSWORD_ADDRESS_RATE_LIMIT: '1000000/1000000',
};

/** The service started by `start`, with a client and a person of a password. */
async function service(name: string, start: () => Promise<ServiceProcess>): Promise<Target> {
  const s = await start();
  try {
    const { result: client } = (await s.admin('POST', '/oauth2/clients', {
      client_name: 'bench',
      scopes: ['openid', 'read'],
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
    })) as { result: { client_id: string; client_secret: string } };
    const handle = `bench-${crypto.randomUUID().slice(0, 8)}`;
    const { result: person } = (await s.admin('POST', '/persons', {
      handles: [{ type: 'username', value: handle }],
    })) as { result: { person_id: string } };
    await s.admin('PUT', `/persons/${person.person_id}/credentials/password`, { password: PASSWORD });
    const exchange = exchanger(`${s.base}/oauth2/tokens`, client.client_id, client.client_secret);
    const authorizeUrl = `${s.base}/oauth2/authorize`;

    /** The page, then the password form: a code, and the browser holds the session cookie. */
    async function signInWith(browser: Browser, check = false): Promise<Legs> {
      const { verifier, challenge } = await pkce();
      const t0 = performance.now();
      const page = await browser.fetch(`${authorizeUrl}?${authorizeQuery(client.client_id, challenge)}`);
      const html = await page.text();
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
      if (page.status !== 200 || !csrf) throw new Error(`the authorization page answered ${page.status}`);
      const form = await browser.fetch(`${s.base}/oauth2/authorize/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.base },
        body: new URLSearchParams({ csrf_token: csrf, handle, password: PASSWORD }).toString(),
      });
      const code = await codeOf(form, 'the password form');
      const t1 = performance.now();
      await exchange(code, verifier, check);
      return { authorize: t1 - t0, exchange: performance.now() - t1 };
    }

    const browsers: Browser[] = [];
    return {
      name,
      pids: s.pids,
      async signIn(n) {
        for (let i = browsers.length; i < n; i++) {
          const browser = new Browser();
          await signInWith(browser, i === 0);
          if (!browser.has('sid_')) throw new Error('no session cookie after the sign-in');
          browsers.push(browser);
        }
      },
      silent: (w) => silentPair(browsers[w]!, authorizeUrl, client.client_id, exchange),
      password: () => signInWith(new Browser()),
      stop: s.stop,
    };
  } catch (e) {
    await s.stop();
    throw e;
  }
}

/** node-oidc-provider with one account; its interaction signs the browser in and grants the scopes. */
async function oidcProvider(): Promise<Target> {
  const port = String(await freePort());
  const base = `http://127.0.0.1:${port}`;
  const child = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/oidc-provider-sessions.ts')],
    {
      PORT: port,
      NODE_ENV: 'production',
      CLIENT_SECRET: 'bench-secret',
      REDIRECT_URI: REDIRECT,
      ...IMAGE_RUNTIME_ENV,
    },
    /"port":\d+/,
  );
  const exchange = exchanger(`${base}/token`, 'bench-client', 'bench-secret');
  const browsers: Browser[] = [];
  return {
    name: 'node-oidc-provider',
    pids: () => [child.pid],
    async signIn(n) {
      for (let i = browsers.length; i < n; i++) {
        const browser = new Browser();
        const { verifier, challenge } = await pkce();
        let res = await browser.fetch(`${base}/auth?${authorizeQuery('bench-client', challenge)}`);
        // /auth -> /interaction/{uid} (signed in, granted) -> /auth/{uid} (resumed) -> the client.
        for (let hops = 0; hops < 2; hops++) {
          const next = res.headers.get('location') ?? '';
          await res.arrayBuffer();
          if (!next.startsWith('/') && !next.startsWith(base))
            throw new Error(`node-oidc-provider's sign-in answered ${res.status} ${next}`);
          res = await browser.fetch(new URL(next, base).href);
        }
        await exchange(await codeOf(res, "node-oidc-provider's sign-in"), verifier, i === 0);
        if (!browser.has('_session')) throw new Error('no _session cookie after the sign-in');
        browsers.push(browser);
      }
    },
    silent: (w) => silentPair(browsers[w]!, `${base}/auth`, 'bench-client', exchange),
    stop: child.stop,
  };
}

interface Run {
  perSecond: number;
  /** CPU milliseconds the server's processes used per authorization. */
  cpuMs: number;
  pair: number[];
  authorize: number[];
  exchange: number[];
}

/** `op` by `inflight` loops for `seconds` or `max` operations, whichever ends first. */
async function drive(
  op: (w: number) => Promise<Legs>,
  pids: number[],
  inflight: number,
  seconds: number,
  max: number,
): Promise<Run> {
  const run: Run = { perSecond: 0, cpuMs: 0, pair: [], authorize: [], exchange: [] };
  const cpu = () => pids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? Number.NaN), 0);
  const cpu0 = cpu();
  let started = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: inflight }, async (_, w) => {
      while (performance.now() < end && started < max) {
        started++;
        const s = performance.now();
        const legs = await op(w);
        run.pair.push(performance.now() - s);
        run.authorize.push(legs.authorize);
        run.exchange.push(legs.exchange);
      }
    }),
  );
  run.perSecond = (run.pair.length / (performance.now() - t0)) * 1000;
  run.cpuMs = ((cpu() - cpu0) * 1000) / run.pair.length;
  return run;
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const p = (xs: number[]) => {
  const s = sorted(xs);
  return { p50: percentile(s, 50), p99: percentile(s, 99) };
};
const median = (runs: Run[]) =>
  [...runs].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(runs.length / 2)]!;

/** A row: an operation, how many at a time, and the row it compares with (node-oidc-provider's). */
interface Measured {
  name: string;
  op: (w: number) => Promise<Legs>;
  pids: () => number[];
  inflight: number;
  versus?: Measured;
  runs: Run[];
}

/** silent prompt=none authorizations/s with their code exchange, beside node-oidc-provider and the password round trip. */
export async function benchSessions(o: {
  seconds: number;
  inflight: number;
  rounds: number;
  /** Authorizations at most per row and round. */
  max: number;
  /** Rows of the service on Postgres too. */
  databaseUrl?: string;
}): Promise<string> {
  const targets: Target[] = [];
  try {
    const embedded = await service('this service on PGlite', () => startEmbeddedService(UNLIMITED));
    targets.push(embedded);
    if (o.databaseUrl) {
      const url = o.databaseUrl;
      targets.push(await service('this service on Postgres', () => startPostgresService(url, UNLIMITED)));
    }
    const provider = await oidcProvider();
    targets.push(provider);
    for (const t of targets) {
      await t.signIn(o.inflight);
      for (let i = 0; i < WARM_UP; i++) await t.silent(0);
    }
    for (let i = 0; i < 3; i++) await embedded.password!();

    const rows: Measured[] = [];
    const silentRows = (inflight: number, what: string) => {
      const of = targets.map(
        (t): Measured => ({
          name: `${t.name}: ${what}`,
          op: (w) => t.silent(w),
          pids: t.pids,
          inflight,
          runs: [],
        }),
      );
      const versus = of.at(-1)!;
      for (const r of of) r.versus = versus;
      rows.push(...of);
    };
    silentRows(1, 'silent authorization + code exchange, one at a time');
    silentRows(o.inflight, `silent, ${o.inflight} browsers in flight`);
    const password = (inflight: number, what: string): Measured => ({
      name: `${embedded.name}: password round trip (page, form, exchange), ${what}`,
      op: () => embedded.password!(),
      pids: embedded.pids,
      inflight,
      runs: [],
    });
    const passwordOne = password(1, 'one at a time');
    const passwordMany = password(o.inflight, `${o.inflight} in flight`);
    rows.push(passwordOne, passwordMany);

    for (let r = 0; r < o.rounds; r++)
      for (const x of rows) x.runs.push(await drive(x.op, x.pids(), x.inflight, o.seconds, o.max));

    const lines = rows.map((x) => {
      const run = median(x.runs);
      const pair = p(run.pair);
      const a = p(run.authorize);
      const e = p(run.exchange);
      return row([
        x.name,
        fmtRate(run.perSecond),
        fmtMs(pair.p50),
        fmtMs(pair.p99),
        `${fmtMs(a.p50)} / ${fmtMs(a.p99)}`,
        `${fmtMs(e.p50)} / ${fmtMs(e.p99)}`,
        fmtMs(run.cpuMs),
        x.versus ? (run.perSecond / median(x.versus.runs).perSecond).toFixed(2) : '',
        x.runs.map((y) => fmtRate(y.perSecond)).join(', '),
      ]);
    });
    const times = (a: Measured, b: Measured) =>
      (median(a.runs).perSecond / median(b.runs).perSecond).toFixed(1);
    return [
      `One silent authorization is what a signed-in browser and the client's back end do: GET /oauth2/authorize with \`prompt=none\`, PKCE (S256), state and nonce, scope \`${SCOPE}\`, and the browser's session cookie, answered by a 302 to the client with a code and no page (the session found by its cookie's digest, the person checked active, the ID token minted through the token issuer with the token_minted hook point and TokenMinted_v1, the session's use recorded, the code stored), then the code exchanged at POST /oauth2/tokens with client_secret_basic (burnt, PKCE checked, an ES256 access token, a refresh token, the ES256 ID token). The service is the real entry (\`bun entry/bun.ts\`, every plugin of service.config.ts, LOG_LEVEL=warn) in its own process, on its embedded PGlite in a temporary data directory${o.databaseUrl ? ', and again on Postgres (a schema of its own, the Postgres-backed queue, metrics on)' : ''}; node-oidc-provider (oidc-provider 9, NODE_ENV=production, on node:http in its own Bun process, in memory: a Map adapter, scripts/bench/oidc-provider-memory.ts) does the same for one account whose session and grant its interaction made once (scripts/bench/oidc-provider-sessions.ts), with ES256 ID tokens, ES256 JWT access tokens (resource indicators) and a refresh token. Each browser signed in once by the password form (the service) or the interaction (node-oidc-provider) before the measure; "${o.inflight} browsers in flight" is ${o.inflight} such browsers, a session each. The password round trip is a fresh browser's: the page, the form posted with its cookie and csrf_token (argon2id at the default cost, m=19 MiB t=2, a session started), the code exchanged. Every server runs with MIMALLOC_PURGE_DELAY=${IMAGE_RUNTIME_ENV.MIMALLOC_PURGE_DELAY}; the client is this benchmark's Bun process (fetch, keep-alive), on the same two cores. The servers are loaded in turn, ${o.seconds} s or ${o.max.toLocaleString('en')} authorizations a row, whichever ends first, for ${o.rounds} rounds after ${WARM_UP} unmeasured ones; a row is its median round (every round's rate in the last column). "server CPU ms each" is the CPU time the server's process used (every thread, read from /proc) per authorization: on a shared machine it moves less than the rates do; on Postgres the database's own time is not in it. Load average ${loadavg()[0]!.toFixed(1)} on ${navigator.hardwareConcurrency} cores when it ended.`,
      '',
      row([
        'path',
        'authorizations/s',
        'p50 ms',
        'p99 ms',
        'authorize p50 / p99 ms',
        'code exchange p50 / p99 ms',
        'server CPU ms each',
        'times node-oidc-provider',
        'rounds',
      ]),
      row(['---', '---', '---', '---', '---', '---', '---', '---', '---']),
      ...lines,
      '',
      `On PGlite, with a session the service answered ${times(rows[0]!, passwordOne)} times as many authorizations one at a time as the password round trip, and ${times(rows[targets.length]!, passwordMany)} times as many with ${o.inflight} in flight. "authorize" is the browser's part: the one GET for a silent authorization, the page and the form for the password round trip.`,
    ].join('\n');
  } finally {
    for (const t of targets) await t.stop();
  }
}
