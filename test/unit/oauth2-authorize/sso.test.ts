import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { existsSync } from 'node:fs';
import * as oauth from 'oauth4webapi';
import type { Browser, Page } from 'playwright-core';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startOidcOp } from '../../helpers/oidc-op.ts';
import { type AuthorizeService, discover, type MadeClient, opts, startAuthorizeService } from './fixture.ts';

/**
 * SSO inside the hosted login, end to end: headless Chromium (playwright-core) clicks the page's button,
 * a real OpenID provider (oidc-provider on loopback) signs the person in, and the application's side is
 * oauth4webapi. Skipped, with a message, only where no Chromium can be had (.ci/run installs it).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present)
  console.warn(`skipping the hosted login SSO test: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

const acme = oidcProvider({ id: 'acme', displayName: 'Acme ID', allowLoopbackIssuer: true });
const CREDENTIALS = '/organizations/sso/oidc/provider-credentials';
const opClient = { clientId: 'acme-app', clientSecret: 'a-client-secret-of-the-loopback-op' };

let s: AuthorizeService;
let op: Awaited<ReturnType<typeof startOidcOp>>;
let browser: Browser;
let client: MadeClient;
let app: ReturnType<typeof Bun.serve>;
let redirectUri: string;
const landed: URL[] = [];

beforeAll(async () => {
  if (!present) return;
  app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      landed.push(new URL(request.url));
      return new Response('<!doctype html><title>App</title><p>signed in</p>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  redirectUri = `http://127.0.0.1:${app.port}/callback`;
  s = await startAuthorizeService({ plugins: [sso({ providers: [acme] }), ssoSignIn()] });
  op = await startOidcOp({ ...opClient, redirectUri: `${s.url}/oauth2/authorize/sso/callback` });
  client = await s.createClient({ redirect_uris: [redirectUri] });
  const made = await s.call('POST', CREDENTIALS, {
    body: {
      provider: 'acme',
      client_id: opClient.clientId,
      client_secret: opClient.clientSecret,
      label: 'Acme Staff',
      enable_in_service_oidc_authz_server: true,
      options: { acme: { issuer: op.issuer, authorize_scopes: ['email'] } },
    },
  });
  await expectStatus(made, 201);
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking'],
  });
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  await op?.stop();
  app?.stop(true);
});

/** The application's authorization request, as oauth4webapi's caller builds it. */
async function begin(extra: Record<string, string> = {}) {
  const as = await discover(s);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid email read',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return { as, url, verifier, state, nonce };
}

/** The application's callback: validates the response and exchanges the code with oauth4webapi. */
async function redeem(a: Awaited<ReturnType<typeof begin>>, callback: URL) {
  const c = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(a.as, c, callback, a.state);
  const tokens = await oauth.processAuthorizationCodeResponse(
    a.as,
    c,
    await oauth.authorizationCodeGrantRequest(
      a.as,
      c,
      oauth.ClientSecretBasic(client.client_secret!),
      params,
      redirectUri,
      a.verifier,
      opts,
    ),
    { expectedNonce: a.nonce, requireIdToken: true },
  );
  return { tokens, claims: oauth.getValidatedIdTokenClaims(tokens)! };
}

async function withPage<T>(run: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    return await run(await context.newPage());
  } finally {
    await context.close();
  }
}

const lastCallback = () => landed.filter((u) => u.pathname === '/callback').at(-1)!;

describe.skipIf(!present)('SSO buttons in the hosted login', () => {
  it('signs in through the button and the provider, and the client gets verified tokens', async () => {
    op.state.decision = { sub: 'ada-at-acme', email: 'ada@acme.example', email_verified: true };
    const a = await begin();
    await withPage(async (page) => {
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        const u = r.url();
        if (![s.url, op.issuer, redirectUri].some((o) => u.startsWith(o))) elsewhere.push(u);
      });
      await page.goto(a.url.href);
      const button = page.getByRole('button', { name: 'Sign in with Acme Staff' });
      expect(await button.count()).toBe(1);
      await Promise.all([page.waitForURL(`${redirectUri}?**`), button.click()]);
      expect(elsewhere).toEqual([]);
    });
    const callback = lastCallback();
    expect(callback.searchParams.get('state')).toBe(a.state);
    expect(callback.searchParams.get('iss')).toBe(s.url);
    const { tokens, claims } = await redeem(a, callback);
    expect(claims.nonce).toBe(a.nonce);
    expect(claims.authenticated_methods).toEqual(['oidc']);
    expect(claims.idp).toBe('acme');
    expect(tokens.scope).toBe('openid email read');
  }, 60_000);
});
