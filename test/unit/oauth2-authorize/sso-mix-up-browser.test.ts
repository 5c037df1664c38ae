import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import type { BrowserContext } from 'playwright-core';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startOidcOp } from '../../helpers/oidc-op.ts';
import { type MadeClient, startAuthorizeService } from './fixture.ts';

/**
 * The mix-up drill (RFC 9700 section 4.4), end to end in Debian's headless Chromium. Two real OpenID
 * providers on loopback (oidc-provider): the victim organization's honest one, which like many
 * providers sends no `iss` (RFC 9207), and the attacker organization's, which records every request
 * it receives. The victim's browser is lured into a sign-in with the attacker's credential, whose
 * authorization endpoint sends it on to the honest provider with the victim organization's client ID,
 * and the service's state, PKCE challenge and nonce. The victim signs in there; the honest provider
 * sends the victim's code back to a callback of the service. With one callback for every credential,
 * the state would send that code (and the verifier) to the attacker's token endpoint.
 *
 * Both callbacks (SSO sign-in's and the hosted login's), each at the victim credential's own redirect
 * URI and at the retired shared one (still registered at the honest provider: the worst case).
 */
const present = chromiumPresent('the SSO mix-up drill');

const VICTIM = { clientId: 'victim-app', clientSecret: 'victim-org-secret-never-to-leave' };
const ATTACKER = { clientId: 'attacker-app', clientSecret: 'attacker-org-secret' };
const acme = oidcProvider({ id: 'acme', displayName: 'Acme ID' });
const victimAccount = { sub: 'vic', email: 'vic@victim.example', email_verified: true };

let s: Awaited<ReturnType<typeof startAuthorizeService>>;
let honest: Awaited<ReturnType<typeof startOidcOp>>;
let attacker: Awaited<ReturnType<typeof startOidcOp>>;
let browser: Awaited<ReturnType<typeof launchChromium>>;
let app: ReturnType<typeof Bun.serve>;
let attackerApp = '';
let attackerClient: MadeClient;
/** Where the honest provider may send the victim's code: the credential's own URIs and the shared ones. */
const callbacks = { signInOwn: '', hostedOwn: '', signInShared: '', hostedShared: '' };
/** Every URL the attacker's application was sent to. */
const landed: URL[] = [];

beforeAll(async () => {
  if (!present) return;
  app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      landed.push(new URL(request.url));
      return new Response('<!doctype html><title>Attacker app</title>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  attackerApp = `http://127.0.0.1:${app.port}/cb`;
  s = await startAuthorizeService({ plugins: [sso({ providers: [acme] }), ssoSignIn()] });
  callbacks.signInShared = `${s.url}/sso/oidc/callback`;
  callbacks.hostedShared = `${s.url}/oauth2/authorize/sso/callback`;
  honest = await startOidcOp({ ...VICTIM, redirectUri: callbacks.signInShared }, { withoutIss: true });
  honest.allowRedirectUri(callbacks.hostedShared);
  // The attacker's metadata does not promise iss either: else the answer's missing iss would betray it.
  attacker = await startOidcOp(
    { ...ATTACKER, redirectUri: callbacks.signInShared },
    { record: true, withoutIss: true },
  );

  // The service's default organization is the attacker's; the victim's is another.
  const victim = await s.service.ctx.orgs.create('Victim');
  const asVictim = { orgId: victim.organization.id, key: victim.apiKey };
  const credential = (body: Record<string, unknown>, as = {}) =>
    s.call('POST', '/organizations/sso/oidc/provider-credentials', {
      ...as,
      body: { provider: 'acme', enable_in_service_oidc_authz_server: true, ...body },
    });
  const cv = await credential(
    {
      client_id: VICTIM.clientId,
      client_secret: VICTIM.clientSecret,
      options: { acme: { issuer: honest.issuer } },
    },
    asVictim,
  );
  await expectStatus(cv, 201);
  callbacks.signInOwn = cv.json.result.redirect_uri;
  callbacks.hostedOwn = cv.json.result.hosted_login_redirect_uri;
  honest.allowRedirectUri(callbacks.signInOwn);
  honest.allowRedirectUri(callbacks.hostedOwn);
  const ca = await credential({
    client_id: ATTACKER.clientId,
    client_secret: ATTACKER.clientSecret,
    options: { acme: { issuer: attacker.issuer } },
  });
  await expectStatus(ca, 201);
  await expectStatus(
    await s.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [attackerApp] } }),
    200,
  );
  attackerClient = await s.createClient({ redirect_uris: [attackerApp] });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  await honest?.stop();
  await attacker?.stop();
  app?.stop(true);
});

/** Where the lured browser starts: the attacker's credential, through one or the other flow. */
async function lure(flow: 'sign-in' | 'hosted login'): Promise<string> {
  if (flow === 'sign-in') {
    const q = new URLSearchParams({
      client_id: ATTACKER.clientId,
      redirect_uri: attackerApp,
      state: 'attacker',
    });
    return `${s.url}/sso/oidc/start?${q}`;
  }
  const q = new URLSearchParams({
    client_id: attackerClient.client_id,
    redirect_uri: attackerApp,
    response_type: 'code',
    scope: 'openid email',
    state: 'attacker',
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
    idp: ATTACKER.clientId,
  });
  return `${s.url}/oauth2/authorize?${q}`;
}

/**
 * The victim's browser through the attack, the honest provider sending the code to `redirectUri`:
 * the page it ends on, its status, and the codes the honest provider gave the service.
 */
async function drill(flow: 'sign-in' | 'hosted login', redirectUri: string) {
  const context: BrowserContext = await browser.newContext();
  const codes: string[] = [];
  try {
    // The service's answer that sends the browser to the attacker's authorization endpoint, and that
    // endpoint's answer in one: on to the honest provider with the victim organization's client ID
    // and the service's own state, challenge and nonce. (Chromium does not route the requests of a
    // redirect, so the first answer's Location is where the attacker's endpoint would send it.) An
    // application page sends the browser to GET /sso/oidc/start with its organization's header.
    const start = flow === 'sign-in' ? '/sso/oidc/start' : '/oauth2/authorize';
    await context.route(at(s.url, start), async (route) => {
      const headers = { ...route.request().headers(), [s.names.orgId]: s.org.id };
      const response = await route.fetch({ headers, maxRedirects: 0 });
      const toAttacker = new URL(response.headers().location ?? '');
      expect(toAttacker.origin).toBe(attacker.issuer);
      const asked = toAttacker.searchParams;
      const onward = new URL(`${honest.issuer}/auth`);
      for (const name of ['state', 'nonce', 'code_challenge', 'code_challenge_method'])
        onward.searchParams.set(name, asked.get(name) ?? '');
      onward.searchParams.set('client_id', VICTIM.clientId);
      onward.searchParams.set('redirect_uri', redirectUri);
      onward.searchParams.set('response_type', 'code');
      onward.searchParams.set('scope', 'openid email');
      await route.fulfill({ response, headers: { ...response.headers(), location: onward.toString() } });
    });
    const page = await context.newPage();
    page.on('request', (r) => {
      const url = new URL(r.url());
      const code = url.searchParams.get('code');
      if (url.origin === s.url && code) codes.push(code);
    });
    honest.state.decision = victimAccount;
    const res = await page.goto(await lure(flow));
    return {
      status: res?.status() ?? 0,
      url: page.url(),
      text: (await page.textContent('body')) ?? '',
      codes,
    };
  } finally {
    await context.close();
  }
}

/** A route matcher: this origin and path, any query. */
const at = (origin: string, path: string) => (url: URL) => url.origin === origin && url.pathname === path;

/** What the attacker's provider received since `from`: nothing of the victim's. */
function attackerGotNothing(from: number, code: string) {
  const since = attacker.requests.slice(from);
  // Basic credentials opened (form-encoded inside base64, RFC 6749 section 2.3.1) to be searched too.
  const basic = since.map((r) => String(r.headers.authorization ?? '').replace(/^Basic /, ''));
  const seen = JSON.stringify(since) + basic.map((b) => decodeURIComponent(atob(b))).join(' ');
  expect(since.filter((r) => r.url.startsWith('/token'))).toEqual([]);
  expect(seen).not.toContain(code);
  expect(seen).not.toContain(VICTIM.clientSecret);
}

async function noTokenForTheVictim() {
  for (const name of ['AuthenticationSucceeded_v1', 'TokenMinted_v1', 'PersonCreated_v1'])
    expect(s.events.filter((e) => e.event_metadata.event_name === name)).toEqual([]);
  expect(landed.filter((u) => u.searchParams.has('code') || u.hash.includes('token='))).toEqual([]);
}

describe.skipIf(!present)('the SSO mix-up drill, in Chromium', () => {
  const cases = [
    ['sign-in', 'signInOwn', 'started for another SSO credential'],
    ['sign-in', 'signInShared', '/sso/oidc/callback is retired'],
    ['hosted login', 'hostedOwn', 'came back to another SSO credential'],
    ['hosted login', 'hostedShared', 'each SSO credential has a redirect URI of its own'],
  ] as const;
  for (const [flow, at, says] of cases)
    it(`keeps the victim's code from the attacker's provider: ${flow}, answer at ${at}`, async () => {
      const from = attacker.requests.length;
      const seen = await drill(flow, callbacks[at]);
      // The honest provider did give the victim's code, to the service's callback.
      expect(seen.codes.length).toBe(1);
      attackerGotNothing(from, seen.codes[0]!);
      await noTokenForTheVictim();
      // The victim sees the service's error, not the attacker's application.
      expect(seen.url.startsWith(callbacks[at])).toBe(true);
      expect(seen.status).toBeGreaterThanOrEqual(400);
      expect(seen.text).toContain(says);
    }, 60_000);
});
