/**
 * The token endpoint for command-line tools, devices and agents, through `service.fetch` in this process
 * (no port), on PGlite and on Postgres: client_credentials grants with client_secret_basic, with
 * private_key_jwt (an ES256 client assertion, a fresh jti each), with DPoP (a fresh proof each), and with
 * both; then device_code polls of pending device codes (authorization_pending). Beside them, raw ES256
 * signing in the same run: the bound of a grant that signs one token, and what each assertion or proof
 * costs its client.
 */
import { loadavg } from 'node:os';
import { sql } from 'drizzle-orm';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { systemClock } from '../../adapters/clock/system.ts';
import { loadConfig } from '../../core/config.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { yieldToEventLoop } from '../../core/runtime.ts';
import { createService } from '../../entry/create-service.ts';
import { oauth2 } from '../../plugins/oauth2/index.ts';
import { oauth2Authorize } from '../../plugins/oauth2-authorize/index.ts';
import { password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { onStorages, signingBound } from './oauth2-authorize.ts';
import { fmtMs, fmtRate, row, type Summary, summarize } from './stats.ts';

const BASE = 'https://ids.bench';
const TOKENS = `${BASE}/oauth2/tokens`;
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The interval a device code answers (RFC 8628 §3.2): a poll sooner than it after the last is slow_down. */
const INTERVAL_MS = 5000;

/** The service's clock: the system's, moved on when a device code's next poll would come too soon. */
function benchClock() {
  let offset = 0;
  const clock: Clock = { now: () => Date.now() + offset, sleep: systemClock.sleep, rate: 1 };
  return { clock, advance: (ms: number) => (offset += Math.max(0, ms)) };
}

/** A service with the OAuth plugins on `storage`, and the clients of each row. */
export async function agentsService(storage: Storage, clock: Clock) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    PUBLIC_BASE_URL: BASE,
  });
  const service = await createService(config, {
    overrides: { storage, clock },
    definition: { plugins: [persons(), tokens(), password(), oauth2(), oauth2Authorize()] },
  });
  const { organization, apiKey } = await service.ctx.orgs.create('bench');
  const h = service.ctx.headers;
  const admin = async (body: Record<string, unknown>) => {
    const res = await service.fetch(
      new Request(`${BASE}/oauth2/clients`, {
        method: 'POST',
        headers: { [h.orgId]: organization.id, [h.apiKey]: apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'bench', scopes: ['read'], redirect_uris: [], ...body }),
      }),
    );
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /oauth2/clients answered ${res.status} ${text}`);
    return JSON.parse(text).result as { client_id: string; client_secret?: string };
  };
  const assertionKey = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(assertionKey.publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  const secretClient = await admin({ grant_types: ['client_credentials'] });
  const keyClient = await admin({
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [jwk] },
  });
  const deviceClient = await admin({ grant_types: [DEVICE], public: true });
  const basic = `Basic ${btoa(`${encodeURIComponent(secretClient.client_id)}:${encodeURIComponent(secretClient.client_secret!)}`)}`;

  /** A POST of a form to an endpoint; its status and body. */
  const post = async (path: string, form: string, headers: Record<string, string> = {}) => {
    const res = await service.fetch(
      new Request(`${BASE}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: form,
      }),
    );
    return { status: res.status, text: await res.text() };
  };
  /** An ES256 client assertion of the private_key_jwt client (RFC 7523), a fresh jti. */
  const assertion = () =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
      .setIssuer(keyClient.client_id)
      .setSubject(keyClient.client_id)
      .setAudience(TOKENS)
      .setJti(crypto.randomUUID())
      .setIssuedAt()
      .setExpirationTime('4m')
      .sign(assertionKey.privateKey);
  const dpopKey = await generateKeyPair('ES256');
  const dpopJwk = await exportJWK(dpopKey.publicKey);
  /** A DPoP proof for POST /oauth2/tokens (RFC 9449), a fresh jti. */
  const proof = () =>
    new SignJWT({ htm: 'POST', htu: TOKENS, jti: crypto.randomUUID() })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpopJwk })
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .sign(dpopKey.privateKey);
  const byKey = (a: string) =>
    `grant_type=client_credentials&scope=read&client_assertion_type=${encodeURIComponent(ASSERTION_TYPE)}&client_assertion=${a}`;

  /** The client_credentials rows: what one request needs, signed before the timed window. */
  const grants: { what: string; prepare: () => Promise<() => ReturnType<typeof post>> }[] = [
    {
      what: 'client_secret_basic',
      prepare: async () => () =>
        post('/oauth2/tokens', 'grant_type=client_credentials&scope=read', { authorization: basic }),
    },
    {
      what: 'private_key_jwt (ES256 assertion, jti once)',
      prepare: async () => {
        const a = await assertion();
        return () => post('/oauth2/tokens', byKey(a));
      },
    },
    {
      what: 'client_secret_basic + DPoP proof (ES256, jti once)',
      prepare: async () => {
        const p = await proof();
        return () =>
          post('/oauth2/tokens', 'grant_type=client_credentials&scope=read', {
            authorization: basic,
            dpop: p,
          });
      },
    },
    {
      what: 'private_key_jwt + DPoP proof',
      prepare: async () => {
        const [a, p] = await Promise.all([assertion(), proof()]);
        return () => post('/oauth2/tokens', byKey(a), { dpop: p });
      },
    },
  ];
  /** A pending device code of the device client. */
  const deviceCode = async () => {
    const res = await post('/oauth2/device_authorization', `client_id=${deviceClient.client_id}&scope=read`);
    if (res.status !== 200)
      throw new Error(`the device authorization endpoint answered ${res.status} ${res.text}`);
    return JSON.parse(res.text).device_code as string;
  };
  const poll = (code: string) =>
    post(
      '/oauth2/tokens',
      `grant_type=${encodeURIComponent(DEVICE)}&device_code=${code}&client_id=${deviceClient.client_id}`,
    );
  return { service, grants, deviceCode, poll };
}

/**
 * Runs `inflight` workers over requests prepared beforehand (at most `max`), each sent when the
 * worker's last answered, until `ms` have passed or the requests are spent. Every answer must be `ok`.
 */
async function timed(
  requests: (() => Promise<{ status: number; text: string }>)[],
  inflight: number,
  ms: number,
  ok: (a: { status: number; text: string }) => boolean,
): Promise<Measured> {
  const cpu = process.cpuUsage();
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      while (performance.now() < end && next < requests.length) {
        const send = requests[next++]!;
        const s = performance.now();
        const answer = await send();
        latencies.push(performance.now() - s);
        if (!ok(answer)) throw new Error(`answered ${answer.status} ${answer.text.slice(0, 300)}`);
        await yieldToEventLoop();
      }
    }),
  );
  return { ...summarize(latencies, performance.now() - t0), cpuMs: cpuMsSince(cpu) };
}

/** A row's figures and the CPU time this process spent in it (every thread), in milliseconds. */
type Measured = Summary & { cpuMs: number };
const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
};

const granted = (a: { status: number; text: string }) =>
  a.status === 200 && a.text.includes('"access_token"');

/** client_credentials grants/s by client authentication and DPoP, and device_code polls/s. */
export async function benchOAuth2Agents(o: {
  seconds: number;
  inflight: number;
  /** Requests signed ahead per row: a row ends when they are spent, if its time has not. */
  max: number;
  /** Pending device codes per worker, polled in turn. */
  codesPerWorker: number;
  databaseUrl?: string;
}): Promise<string> {
  const cpu = process.cpuUsage();
  const signed = await signingBound({ seconds: o.seconds, inflight: o.inflight });
  const bound: Measured = { ...signed, cpuMs: cpuMsSince(cpu) };
  const line = (what: string, s: Measured) =>
    row([
      what,
      fmtRate(s.perSecond),
      fmtMs(s.p50),
      fmtMs(s.p99),
      fmtMs(s.cpuMs / s.count),
      (s.perSecond / bound.perSecond).toFixed(3),
      String(s.count),
    ]);
  const rows = await onStorages(o.databaseUrl, o.inflight, async (storage, label) => {
    const { clock, advance } = benchClock();
    const { service, grants, deviceCode, poll } = await agentsService(storage, clock);
    const out: string[] = [];
    try {
      // The database's own floor on this machine now: a grant that records a jti, a poll that reads and
      // writes its code, each waits for such round trips.
      const selects = Array.from({ length: o.max }, () => async () => {
        await storage.query(sql`select 1`);
        return { status: 200, text: '' };
      });
      out.push(
        line(
          `database round trip (SELECT 1) on ${label}`,
          await timed(selects, o.inflight, o.seconds * 1000, () => true),
        ),
      );
      for (const g of grants) {
        // Warm: the client cached, the key imported, the statements prepared.
        const warm = await Promise.all(Array.from({ length: o.inflight }, g.prepare));
        await timed(warm, o.inflight, 60_000, granted);
        const requests: (() => ReturnType<typeof poll>)[] = [];
        for (let i = 0; i < o.max; i += 500)
          requests.push(...(await Promise.all(Array.from({ length: Math.min(500, o.max - i) }, g.prepare))));
        out.push(line(`${g.what} on ${label}`, await timed(requests, o.inflight, o.seconds * 1000, granted)));
      }

      // Each worker polls its own pending device codes in turn; a code polled again sooner than the
      // interval after its last answer would be slow_down, so the service's clock is moved on to the
      // interval first, as if the device had waited it. The answer is authorization_pending every time.
      const codes = await Promise.all(
        Array.from({ length: o.inflight }, () =>
          Promise.all(Array.from({ length: o.codesPerWorker }, deviceCode)),
        ),
      );
      const lastAnswer = new Map<string, number>();
      const pending = (a: { status: number; text: string }) =>
        a.status === 400 && a.text.includes('"authorization_pending"');
      const requests = Array.from({ length: o.max }, (_, i) => {
        const code = codes[i % o.inflight]![Math.floor(i / o.inflight) % o.codesPerWorker]!;
        return async () => {
          const last = lastAnswer.get(code);
          if (last !== undefined) advance(last + INTERVAL_MS - clock.now());
          const answer = await poll(code);
          lastAnswer.set(code, clock.now());
          return answer;
        };
      });
      const polls = await timed(requests, o.inflight, o.seconds * 1000, pending);
      out.push(line(`device_code polls, pending (authorization_pending) on ${label}`, polls));
    } finally {
      await service.stop();
    }
    return out;
  });
  return [
    `client_credentials grants (\`scope=read\`) by how the client authenticates, and with DPoP (RFC 9449): client_secret_basic (the secret's digest, cached per client); private_key_jwt (RFC 7523: an ES256 assertion verified with the client's inline jwks, iss, sub, aud, exp checked, its jti recorded once in the database); a DPoP proof (ES256, verified with the key in its header, htm, htu and iat checked, its jti recorded once in the database, the token bound by cnf.jkt); both. Every assertion and proof is fresh (its own jti) and signed before the timed window, so the rows measure the service; signing one costs the client what the first row measures. Device polls: ${o.inflight} workers each poll ${o.codesPerWorker} pending device codes of a public client in turn (each poll finds the code, checks the interval, records the poll, answers authorization_pending); the service's clock is moved on to the 5 s interval before a code's next poll, as if each device waited it, so no poll is slow_down. Through \`service.fetch\` in this process, ${o.inflight} in flight, each row ${o.seconds} s or ${o.max} requests, whichever ends first (the last column). The first row of each database is a round trip of \`SELECT 1\`: what a grant recording a jti (one INSERT, proofs arriving together share it) or a poll (a SELECT and an UPDATE) waits for at least. "CPU ms each" is this process's CPU time (every thread: the service, the database when it is PGlite, the loop sending the requests) per request; on Postgres the database's own time is not in it. The machine has ${navigator.hardwareConcurrency} cores; load average ${loadavg()[0]!.toFixed(1)} when the run ended (the benchmark's own work included): well above that, other work shared the cores, and the CPU time per request compares better than the rates.`,
    '',
    row(['token endpoint', 'requests/s', 'p50 ms', 'p99 ms', 'CPU ms each', 'fraction of bound', 'requests']),
    row(['---', '---', '---', '---', '---', '---', '---']),
    line(`bound: raw jose ES256 SignJWT, ${o.inflight} in flight`, bound),
    ...rows.flat(),
  ].join('\n');
}
