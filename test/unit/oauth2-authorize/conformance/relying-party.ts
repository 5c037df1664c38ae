// The relying party of the conformance suite: openid-client (v6) from discovery, a real loopback
// application receiving the browser's callbacks, and headless Chromium (playwright-core) as the person's
// browser, against the service on its loopback port. Modelled on the OpenID Foundation's test plans: each
// test is named by the module it follows.
import { expect } from 'bun:test';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { manualClock } from '../../../helpers/clock.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, startAuthorizeService } from '../fixture.ts';

/** One request the application received: the browser's callback (a GET, or a form_post's POST). */
export interface Landed {
  method: string;
  url: URL;
  /** The posted form of a POST, as sent. */
  body?: string;
  /** The request rebuilt, for openid-client's authorizationCodeGrant (which reads a form_post's body). */
  request: () => Request;
}

/** The application: a loopback server that records every callback and shows "landed". */
export function startApplication() {
  const landed: Landed[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      // The browser's own request for the site icon is no callback.
      if (new URL(request.url).pathname === '/favicon.ico') return new Response(null, { status: 204 });
      const body = request.method === 'POST' ? await request.text() : undefined;
      const url = new URL(request.url);
      const headers = { 'content-type': request.headers.get('content-type') ?? '' };
      landed.push({
        method: request.method,
        url,
        ...(body !== undefined ? { body } : {}),
        request: () =>
          new Request(url, { method: request.method, ...(body !== undefined ? { body, headers } : {}) }),
      });
      return new Response('<!doctype html><title>Application</title><p id="landed">landed</p>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return { landed, origin, redirectUri: `${origin}/callback`, stop: () => server.stop(true) };
}

/** A person of the organization with an email address (verified) and a username, and a password. */
export interface Person {
  personId: string;
  email: string;
  username: string;
  password: string;
}

let people = 0;

/**
 * The OP under test (the service, its clock a manual one), the application and the browser. `rp` is the
 * client's openid-client configuration from discovery, its clock set to the service's.
 */
export async function startConformance(browser?: Browser) {
  const clock = manualClock(Date.now());
  const app = startApplication();
  const s: AuthorizeService = await startAuthorizeService({ clock });

  /** A client of the organization whose redirect URI is the application's callback. */
  const client = (body: Record<string, unknown> = {}) =>
    s.createClient({ redirect_uris: [app.redirectUri], ...body });

  /** openid-client's configuration of the client, by discovery (its clock the service's). */
  const rp = (made: MadeClient) =>
    oidc.discovery(
      new URL(s.url),
      made.client_id,
      {
        ...(made.client_secret ? { client_secret: made.client_secret } : {}),
        // The service's clock moves on command: the relying party's is set to it.
        [oidc.clockSkew]: Math.round((clock.now() - Date.now()) / 1000),
      },
      made.client_secret ? oidc.ClientSecretBasic(made.client_secret) : oidc.None(),
      { execute: [oidc.allowInsecureRequests] },
    );

  async function person(): Promise<Person> {
    const n = ++people;
    const username = `conformance-${process.pid}-${n}`;
    const email = `conformance.${process.pid}.${n}@example.com`;
    const made = await s.call('POST', '/persons', {
      body: {
        handles: [
          { type: 'email_address', value: email, verified: true },
          { type: 'username', value: username },
        ],
      },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    const password = `correct horse battery ${n}`;
    await expectStatus(
      await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password } }),
      204,
    );
    return { personId, email, username, password };
  }

  return {
    s,
    clock,
    app,
    client,
    rp,
    person,
    /** A browser of its own (its cookies): a person's browser. */
    browser: () => {
      if (!browser) throw new Error('this suite was started without a browser');
      return browser.newContext();
    },
    async stop() {
      await s.stop();
      app.stop();
    },
  };
}

export type Conformance = Awaited<ReturnType<typeof startConformance>>;

/** One authorization request as the relying party starts it: the URL and what it checks after. */
export interface Started {
  url: URL;
  state: string;
  nonce: string | undefined;
  verifier: string;
}

/** Builds an authorization request with openid-client: fresh state, nonce and PKCE (S256). */
export async function begin(
  config: oidc.Configuration,
  redirectUri: string,
  extra: Record<string, string> = {},
  o: { nonce?: boolean } = {},
): Promise<Started> {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = o.nonce === false ? undefined : oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email',
    state,
    ...(nonce ? { nonce } : {}),
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  return { url, state, nonce, verifier };
}

/** Where a navigation ended: the application's callback, or a page of the service (its status). */
export type Arrival = { landed: URL; status: number } | { landed: undefined; status: number };

/** Opens a URL in the page and follows the redirects: where the browser ends. */
export async function visit(page: Page, url: URL | string, app: { origin: string }): Promise<Arrival> {
  const res = await page.goto(String(url));
  const at = new URL(page.url());
  const status = res?.status() ?? 0;
  return at.origin === app.origin ? { landed: at, status } : { landed: undefined, status };
}

/** Types the person's handle (unless given already) and password into the hosted login, and submits. */
export async function typeSignIn(
  page: Page,
  app: { origin: string },
  who: Pick<Person, 'username' | 'password'>,
  o: { handle?: boolean } = {},
): Promise<URL> {
  if (o.handle !== false) await page.fill('#handle', who.username);
  await page.fill('#password', who.password);
  await Promise.all([
    page.waitForURL((u) => u.origin === app.origin),
    page.click('form button[type=submit]'),
  ]);
  return new URL(page.url());
}

/** Signs in in a fresh page of the context: the login page shown, the callback reached. */
export async function signInWith(
  context: BrowserContext,
  c: Conformance,
  url: URL,
  who: Pick<Person, 'username' | 'password'>,
): Promise<URL> {
  const page = await context.newPage();
  try {
    const opened = await visit(page, url, c.app);
    expect(opened.landed).toBeUndefined();
    await expectStatus({ status: opened.status }, 200);
    return await typeSignIn(page, c.app, who);
  } finally {
    await page.close();
  }
}

/** Opens the URL in a fresh page of the context and answers where it ended. */
export async function silently(context: BrowserContext, c: Conformance, url: URL): Promise<Arrival> {
  const page = await context.newPage();
  try {
    return await visit(page, url, c.app);
  } finally {
    await page.close();
  }
}

/** The code exchange by openid-client, checking state, nonce, PKCE, iss and the ID token. */
export function redeem(
  config: oidc.Configuration,
  callback: URL | Request,
  started: Started,
  checks: { maxAge?: number } = {},
) {
  return oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: started.verifier,
    expectedState: started.state,
    ...(started.nonce ? { expectedNonce: started.nonce } : {}),
    idTokenExpected: true,
    ...checks,
  });
}
