import { expect } from 'bun:test';
import * as oauth from 'oauth4webapi';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import type { Logger } from '../../../core/log.ts';
import { definePlugin, type ServiceDefinition } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { beforeTokenIssued } from '../../../core/tokens/before-token-issued.ts';
import { oauth2 } from '../../../plugins/oauth2/index.ts';
import { oauth2Authorize } from '../../../plugins/oauth2-authorize/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { createPerson, identityPlugins } from '../../helpers/identity-service.ts';
import { type CallOptions, startTestService } from '../../helpers/service.ts';
import type { HookProbe } from '../../helpers/tokens-service.ts';

/** The client's own redirect URI in these tests: a loopback URL nothing listens on (never fetched). */
export const REDIRECT = 'http://127.0.0.1:9/callback';

/** What createClient answers. */
export interface MadeClient {
  client_id: string;
  client_secret?: string;
  scopes: string[];
}

/**
 * The default identity plugins with oauth2 and oauth2Authorize, on a loopback port whose URL is the
 * PUBLIC_BASE_URL, so an OAuth client library runs discovery against it. A hook probe sits on
 * beforeTokenIssued; every event published is kept.
 */
export async function startAuthorizeService(
  o: {
    env?: Env;
    clock?: Clock;
    storage?: Storage;
    plugins?: ServiceDefinition['plugins'];
    /** Keep every event published (the bus is a work queue: false leaves them to a webhooks plugin). @default true */
    recordEvents?: boolean;
    /** Where the service logs. @default none */
    log?: Logger;
    /** PUBLIC_BASE_URL at http://localhost:<port> (a WebAuthn relying party ID cannot be an IP address). */
    localhost?: boolean;
  } = {},
) {
  let handle: (request: Request, peer?: string) => Promise<Response> = () =>
    Promise.resolve(new Response('starting', { status: 503 }));
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request, srv) => handle(request, srv.requestIP(request)?.address),
  });
  const url = `http://${o.localhost ? 'localhost' : '127.0.0.1'}:${server.port}`;
  const hook: HookProbe = { seen: [], answer: () => undefined };
  const probe = definePlugin({
    id: 'hook-probe',
    setup: () => ({
      attach: [
        beforeTokenIssued.attach({
          run: (draft) => {
            hook.seen.push(draft);
            return hook.answer(draft);
          },
        }),
      ],
    }),
  });
  const t = await startTestService({
    definition: { plugins: [...identityPlugins(), oauth2(), oauth2Authorize(), probe, ...(o.plugins ?? [])] },
    env: { PUBLIC_BASE_URL: url, ...o.env },
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.storage ? { storage: o.storage } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
  handle = t.service.fetchFrom;
  // Workers too: on JetStream the events leave through the outbox relay.
  await t.service.start();
  const events: ServiceEvent[] = [];
  const sub =
    o.recordEvents === false
      ? undefined
      : t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m: Delivered<ServiceEvent>) => {
          events.push(m.payload);
          return ack();
        });

  /** Creates a client through POST /oauth2/clients: authorization_code and refresh_token by default. */
  async function createClient(body: Record<string, unknown> = {}, as: CallOptions = {}): Promise<MadeClient> {
    const res = await t.call('POST', '/oauth2/clients', {
      ...as,
      body: {
        client_name: 'Acme App',
        scopes: ['openid', 'email', 'username', 'read', 'write'],
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: [REDIRECT],
        ...body,
      },
    });
    await expectStatus(res, 201);
    return res.json.result;
  }

  /** The events of that name seen so far, waiting up to 5 s for at least `count`. */
  async function eventsNamed(name: string, count = 1): Promise<ServiceEvent[]> {
    const deadline = Date.now() + 5000;
    const pick = () => events.filter((e) => e.event_metadata.event_name === name);
    while (pick().length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return pick();
  }

  return {
    ...t,
    url,
    hook,
    events,
    eventsNamed,
    createClient,
    person: (as: CallOptions = {}) => createPerson(t, as),
    async stop() {
      await sub?.stop();
      server.stop(true);
      await t.stop();
    },
  };
}

export type AuthorizeService = Awaited<ReturnType<typeof startAuthorizeService>>;

/** The browser's side of the hosted login, by HTTP: the page's cookie and CSRF token. */
export interface OpenedLogin {
  page: Response;
  html: string;
  cookie: string;
  csrfToken: string;
}

/** Opens the authorization URL like a browser: the page, its cookie and the form's csrf_token. */
export async function openLogin(authorizeUrl: string | URL, cookie?: string): Promise<OpenedLogin> {
  const page = await fetch(authorizeUrl, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const html = await page.clone().text();
  await expectStatus(page, 200);
  const set = page.headers.get('set-cookie') ?? '';
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  if (!csrfToken) throw new Error(`no csrf_token in the page: ${html.slice(0, 500)}`);
  return { page, html, cookie: set.split(';')[0]!, csrfToken };
}

/** Posts the hosted form as the browser would (its cookie, its Origin). */
export function submitLogin(
  base: string,
  opened: Pick<OpenedLogin, 'cookie' | 'csrfToken'>,
  handle: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${base}/oauth2/authorize/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: opened.cookie,
      origin: base,
      ...headers,
    },
    body: new URLSearchParams({ csrf_token: opened.csrfToken, handle, password }).toString(),
  });
}

/** The client side of one authorization, from discovery, with oauth4webapi. */
export async function discover(s: AuthorizeService) {
  const issuer = new URL(s.url);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }),
  );
  return as;
}

/** An authorization request's URL as oauth4webapi's caller builds it, with a fresh state, nonce and PKCE. */
export async function authorizationUrl(
  as: oauth.AuthorizationServer,
  clientId: string,
  extra: Record<string, string> = {},
) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid email read',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return { url, verifier, state, nonce };
}

/** Runs the hosted login by HTTP and answers the client's callback URL (the 303's Location). */
export async function loginByHttp(s: AuthorizeService, authorize: URL, handle: string, password: string) {
  const opened = await openLogin(authorize);
  const res = await submitLogin(s.url, opened, handle, password);
  await expectStatus(res, 303);
  const location = new URL(res.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  return location;
}

export const opts = { [oauth.allowInsecureRequests]: true } as const;

/** The value of an Authorization header for HTTP Basic with RFC 6749 appendix B encoding. */
export const basic = (id: string, secret: string) =>
  `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;

/** A form POST to an OAuth endpoint, the client authenticated by Basic (or client_id alone when public). */
export async function postForm(
  s: AuthorizeService,
  path: string,
  client: MadeClient,
  form: Record<string, string>,
): Promise<{ status: number; json: Record<string, unknown>; headers: Headers; text: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (client.client_secret) headers.authorization = basic(client.client_id, client.client_secret);
  else body.set('client_id', client.client_id);
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers, body: body.toString() });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {}, headers: res.headers, text };
}

/** A code for the client, through the hosted login by HTTP, with what the exchange needs. */
export async function obtainCode(
  s: AuthorizeService,
  client: MadeClient,
  extra: Record<string, string> = {},
  person?: { handle: { value: string }; password: string },
) {
  const as = await discover(s);
  const who = person ?? (await s.person());
  const { url, verifier, state, nonce } = await authorizationUrl(as, client.client_id, extra);
  const callback = await loginByHttp(s, url, who.handle.value, who.password);
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`no code in ${callback.href}`);
  return { code, verifier, state, nonce, callback };
}

/** Exchanges a code at the token endpoint (raw form, so every refusal can be read as is). */
export const exchange = (
  s: AuthorizeService,
  client: MadeClient,
  code: string,
  verifier: string | undefined,
  redirectUri = REDIRECT,
) =>
  postForm(s, '/oauth2/tokens', client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    ...(verifier !== undefined ? { code_verifier: verifier } : {}),
  });

/** Refreshes at the token endpoint (raw form). */
export const refresh = (s: AuthorizeService, client: MadeClient, token: string, scope?: string) =>
  postForm(s, '/oauth2/tokens', client, {
    grant_type: 'refresh_token',
    refresh_token: token,
    ...(scope !== undefined ? { scope } : {}),
  });

/** Asserts an OAuth refusal: the status, RFC 6749's error, and a description that says why. */
export async function expectOAuthError(
  res: { status: number; json: Record<string, unknown>; text: string },
  status: number,
  error: string,
  description?: string | RegExp,
) {
  await expectStatus(res, status);
  expect(res.json.error).toBe(error);
  if (description !== undefined) expect(String(res.json.error_description)).toMatch(description);
}
