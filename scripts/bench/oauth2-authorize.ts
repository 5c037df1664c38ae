/**
 * The user grants of the authorization endpoint, through `service.fetch` in this process (no port, no
 * browser): refresh_token grants (rotation: each refresh spends its token and answers the next) and
 * authorization_code round trips (GET /oauth2/authorize, the hosted form posted by HTTP with its cookie
 * and csrf_token, the code exchanged at the token endpoint), on PGlite and on Postgres.
 */
import { loadavg } from 'node:os';
import { generateKeyPair, SignJWT } from 'jose';
import postgres from 'postgres';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { type Env, loadConfig } from '../../core/config.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { createService } from '../../entry/create-service.ts';
import { oauth2 } from '../../plugins/oauth2/index.ts';
import { oauth2Authorize } from '../../plugins/oauth2-authorize/index.ts';
import { password } from '../../plugins/password/index.ts';
import { persons } from '../../plugins/persons/index.ts';
import { tokens } from '../../plugins/tokens/index.ts';
import { rate } from './attributes.ts';
import { measureHostedLogin } from './hosted-login-callback.ts';
import { fmtMs, fmtRate, percentile, row, type Summary } from './stats.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';
const PASSWORD = 'correct horse battery staple';
/** The password limits are a bound against guessing, not what this measures. */
const UNLIMITED = {
  PASSWORD_HANDLE_RATE_LIMIT: '1000000/1000000',
  PASSWORD_ADDRESS_RATE_LIMIT: '1000000/1000000',
};
/** argon2id at its cheapest setting, to show what the flow itself costs beside the password hash. */
export const CHEAP_ARGON2 = { PASSWORD_ARGON2_MEMORY_KIB: '1024', PASSWORD_ARGON2_ITERATIONS: '1' };

async function challengeOf(verifier: string) {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  return btoa(String.fromCharCode(...d))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');
}

/** A service with the OAuth plugins on `storage`, a client, and one person per worker. */
async function oauthService(storage: Storage, workers: number, env: Env = {}) {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `bench:${btoa('b'.repeat(32))}`,
    ...UNLIMITED,
    ...env,
  });
  const service = await createService(config, {
    overrides: { storage },
    definition: { plugins: [persons(), tokens(), password(), oauth2(), oauth2Authorize()] },
  });
  const { organization, apiKey } = await service.ctx.orgs.create('bench');
  const h = service.ctx.headers;
  const send = (path: string, init: RequestInit = {}) =>
    service.fetch(new Request(`http://localhost${path}`, init));
  const admin = async (method: string, path: string, body: unknown) => {
    const res = await send(path, {
      method,
      headers: { [h.orgId]: organization.id, [h.apiKey]: apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const client = (
    await admin('POST', '/oauth2/clients', {
      client_name: 'bench',
      scopes: ['openid', 'read'],
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT],
    })
  ).result as { client_id: string; client_secret: string };
  const basic = `Basic ${btoa(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`)}`;
  const run = crypto.randomUUID().slice(0, 8);
  const handles: string[] = [];
  for (let i = 0; i < workers; i++) {
    const value = `bench-${run}-${i}`;
    const person = await admin('POST', '/persons', { handles: [{ type: 'username', value }] });
    await admin('PUT', `/persons/${person.result.person_id}/credentials/password`, { password: PASSWORD });
    handles.push(value);
  }

  const tokenRequest = async (form: Record<string, string>) => {
    const res = await send('/oauth2/tokens', {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`the token endpoint answered ${res.status} ${text}`);
    return JSON.parse(text) as { refresh_token: string; access_token: string };
  };

  /** One authorization_code round trip for the worker's person: page, form, code exchange. */
  async function roundTrip(worker: number, scope: string) {
    const verifier = `${crypto.randomUUID()}${crypto.randomUUID()}`;
    const query = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope,
      state: 'bench',
      code_challenge: await challengeOf(verifier),
      code_challenge_method: 'S256',
    });
    const page = await send(`/oauth2/authorize?${query}`);
    const html = await page.text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
    if (page.status !== 200 || !csrf) throw new Error(`the authorization endpoint answered ${page.status}`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
    const form = await send('/oauth2/authorize/login', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({
        csrf_token: csrf,
        handle: handles[worker]!,
        password: PASSWORD,
      }).toString(),
    });
    await form.arrayBuffer();
    const code = new URL(form.headers.get('location') ?? 'x:/').searchParams.get('code');
    if (form.status !== 303 || !code) throw new Error(`the login form answered ${form.status}`);
    return tokenRequest({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
  }

  return { service, roundTrip, tokenRequest };
}

export async function onStorages<T>(
  databaseUrl: string | undefined,
  inflight: number,
  measure: (storage: Storage, label: string) => Promise<T>,
): Promise<T[]> {
  const out = [await measure(await createPgliteStorage(), 'PGlite')];
  if (databaseUrl) {
    const schema = `bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const storage = await createPostgresStorage({ url: databaseUrl, schema, max: inflight });
    out.push(await measure(storage, 'Postgres'));
    const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop schema ${schema} cascade`);
    await sql.end();
  }
  return out;
}

/** The machine's load when a section ends: these figures are from a shared 2-core machine. */
const load = () =>
  `Load average ${loadavg()[0]!.toFixed(1)} on ${navigator.hardwareConcurrency} cores when it ended.`;

const line = (what: string, s: Summary) => row([what, fmtRate(s.perSecond), fmtMs(s.p50), fmtMs(s.p99)]);

/**
 * Raw jose ES256 signing in the same run: the tokens section records this bound too, so the ratio of
 * the two says how loaded the machine was compared with that run.
 */
export async function signingBound(o: { seconds: number; inflight: number }): Promise<Summary> {
  const { privateKey } = await generateKeyPair('ES256');
  const claims = { iss: 'https://ids.bench', sub: crypto.randomUUID(), scope: 'read' };
  return rate(
    () =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'k' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey),
    o.inflight,
    o.seconds * 1000,
  );
}

/** refresh_token grants/s: each worker refreshes its own grant in a chain, with and without openid. */
export async function benchOAuth2Refresh(o: {
  seconds: number;
  inflight: number;
  databaseUrl?: string;
}): Promise<string> {
  const bound = line(`bound: raw jose ES256 SignJWT, ${o.inflight} in flight`, await signingBound(o));
  const lines = await onStorages(o.databaseUrl, o.inflight, async (storage, label) => {
    const { service, roundTrip, tokenRequest } = await oauthService(storage, o.inflight, CHEAP_ARGON2);
    const rows: string[] = [];
    for (const scope of ['read', 'openid read']) {
      const chains = await Promise.all(
        Array.from({ length: o.inflight }, async (_, w) => (await roundTrip(w, scope)).refresh_token),
      );
      const summary = await rate(
        async (w) => {
          chains[w] = (
            await tokenRequest({ grant_type: 'refresh_token', refresh_token: chains[w]! })
          ).refresh_token;
        },
        o.inflight,
        o.seconds * 1000,
      );
      rows.push(line(`scope \`${scope}\` on ${label}, ${o.inflight} in flight`, summary));
    }
    await service.stop();
    return rows;
  });
  return [
    `A refresh authenticates the client (Basic), spends the token found by its SHA-256 in one UPDATE ... FROM its family (client, expiry and revocation checked in the statement), checks the person is still active, signs the access token (ES256), stores the next refresh token, and with \`openid\` also issues an ID token through the token issuer (the token_minted hook point, first-token record, TokenMinted_v1 on the bus). The first row is raw ES256 signing in the same run, as the tokens section measures it: its ratio to that section's figure says how loaded the machine was. Through \`service.fetch\` in this process, ${o.seconds} s per row. ${load()}`,
    '',
    row(['refresh_token grants', 'grants/s', 'p50 ms', 'p99 ms']),
    row(['---', '---', '---', '---']),
    bound,
    ...lines.flat(),
  ].join('\n');
}

/** authorization_code round trips/s: page, form (argon2id), exchange; default and cheapest argon2id. */
export async function benchOAuth2Code(o: {
  seconds: number;
  inflight: number;
  databaseUrl?: string;
  /** Sign-ins for the last step's own time, SSO beside password. */
  lastSteps?: number;
}): Promise<string> {
  const lines: string[] = [];
  for (const [what, env] of [
    ['argon2id m=19 MiB t=2 (default)', {}],
    ['argon2id m=1 MiB t=1', CHEAP_ARGON2],
  ] as const) {
    // A fresh database for each: stopping a service closes its storage.
    const rows = await onStorages(o.databaseUrl, o.inflight, async (storage, label) => {
      const { service, roundTrip } = await oauthService(storage, o.inflight, env);
      const summary = await rate((w) => roundTrip(w, 'openid read'), o.inflight, o.seconds * 1000);
      await service.stop();
      return line(`${what} on ${label}, ${o.inflight} in flight`, summary);
    });
    lines.push(...rows);
  }
  return [
    `One round trip is what a browser and the application's back end do, without a browser: GET /oauth2/authorize (validation, a login row, the page), the form posted with its cookie and csrf_token (the password check with its argon2id verification, the ID token through the token issuer with the hook point and TokenMinted_v1, AuthenticationSucceeded_v1, the code and its token family stored), then the code exchanged at POST /oauth2/tokens (burnt, PKCE checked, access and refresh tokens). The argon2id hash bounds it at the default cost; the second row shows the rest of the flow. Through \`service.fetch\` in this process, ${o.seconds} s per row. ${load()}`,
    '',
    row(['authorization_code round trips', 'round trips/s', 'p50 ms', 'p99 ms']),
    row(['---', '---', '---', '---']),
    ...lines,
    ...(o.lastSteps ? await lastStepTable(o.lastSteps) : []),
  ].join('\n');
}

/** The hosted login's last step, one at a time: the SSO callback's own time beside the password form's. */
async function lastStepTable(n: number): Promise<string[]> {
  const m = await measureHostedLogin(n);
  const cheap = await measureHostedLogin(n, { env: CHEAP_ARGON2, sso: false });
  const cells = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return [fmtMs(percentile(sorted, 50)), fmtMs(percentile(sorted, 99))];
  };
  return [
    '',
    `The hosted login's last step (PGlite, over a loopback port, one at a time, ${n} each): the SSO callback (GET /oauth2/authorize/sso/callback after a button, against oidc-provider on loopback; half the sign-ins create the person) burns the provider state, exchanges the code, verifies the ID token, finds or creates the person, finishes the login, mints the ID token (hook point, TokenMinted_v1) and stores the code; "own" is its wall time less the provider's time answering its token and JWKS requests. The password form (POST /oauth2/authorize/login) does the same from the argon2id check on, at the default and the cheapest cost. ${load()}`,
    '',
    row(['hosted login, last step', 'p50 ms', 'p99 ms']),
    row(['---', '---', '---']),
    row(['SSO callback, own time', ...cells(m.ssoOwn)]),
    row(['SSO callback, with the provider', ...cells(m.ssoTotal)]),
    row(['password form (argon2id m=19 MiB t=2)', ...cells(m.password)]),
    row(['password form (argon2id m=1 MiB t=1)', ...cells(cheap.password)]),
  ];
}
