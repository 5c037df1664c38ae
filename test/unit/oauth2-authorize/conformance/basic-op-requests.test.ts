// OpenID Foundation "Basic OP" test plan, the modules about the authorization request itself: the
// redirect URI, response_type, request objects, POST, and parameters the service takes or ignores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt, generateKeyPair, UnsecuredJWT } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../../helpers/chromium.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { exchange, type MadeClient } from '../fixture.ts';
import {
  begin,
  type Conformance,
  type Person,
  redeem,
  signInWith,
  silently,
  startConformance,
  typeSignIn,
  visit,
} from './relying-party.ts';

const present = chromiumPresent('the OIDC Basic OP conformance suite (authorization requests)');

let browser: Browser;
let c: Conformance;
let client: MadeClient;
let config: oidc.Configuration;
let who: Person;

beforeAll(async () => {
  if (!present) return;
  browser = await launchChromium();
  c = await startConformance(browser);
  client = await c.client();
  config = await c.rp(client);
  who = await c.person();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await c?.stop();
});

/** A page of a fresh browser for one test, closed after it. */
async function inPage<T>(run: (page: Page, context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await c.browser();
  try {
    return await run(await context.newPage(), context);
  } finally {
    await context.close();
  }
}

/** The OAuth error openid-client reads from a callback (it refuses the response). */
async function callbackError(callback: URL, state: string) {
  try {
    await oidc.authorizationCodeGrant(config, callback, { expectedState: state });
  } catch (error) {
    if (error instanceof oidc.AuthorizationResponseError) return error;
    throw error;
  }
  throw new Error(`a code was answered: ${callback.href}`);
}

/** Where the browser ends for a request the service must refuse at the callback. */
async function refusedAtCallback(url: URL, state: string) {
  return inPage(async (page) => {
    const arrival = await visit(page, url, c.app);
    if (!arrival.landed) throw new Error(`no redirect to the application: ${await page.content()}`);
    return callbackError(arrival.landed, state);
  });
}

/** An error page of the service, shown in the browser: never a redirect to the address asked. */
async function errorPage(url: URL) {
  const before = c.app.landed.length;
  return inPage(async (page) => {
    const arrival = await visit(page, url, c.app);
    expect(arrival.landed).toBeUndefined();
    await expectStatus({ status: arrival.status }, 400);
    expect(c.app.landed.length).toBe(before);
    return (await page.locator('body').textContent()) ?? '';
  });
}

describe.skipIf(!present)('OIDC Basic OP: authorization requests (openid-client, Chromium)', () => {
  test('oidcc-ensure-registered-redirect-uri: an unregistered redirect_uri is an error page', async () => {
    const started = await begin(config, `${c.app.origin}/elsewhere`);
    expect(await errorPage(started.url)).toContain('registered redirect URIs');
  });

  test('oidcc-ensure-redirect-uri-in-authorization-request: none given is an error page', async () => {
    const started = await begin(config, c.app.redirectUri);
    started.url.searchParams.delete('redirect_uri');
    expect(await errorPage(started.url)).toContain('redirect_uri is required');
  });

  test('oidcc-redirect-uri-query-OK / -mismatch: a registered query is kept; another is refused', async () => {
    const withQuery = `${c.app.redirectUri}?tenant=a&x=1`;
    const queried = await c.client({ client_name: 'Queried App', redirect_uris: [withQuery] });
    const own = await c.rp(queried);
    const started = await begin(own, withQuery);
    const callback = await inPage((_, context) => signInWith(context, c, started.url, who));
    expect(callback.searchParams.get('tenant')).toBe('a');
    expect(callback.searchParams.get('x')).toBe('1');
    // openid-client derives redirect_uri from the callback with its query stripped, which RFC 6749
    // §4.1.3 (identical to the request's) refuses: the exchange is made by hand, with the registered one.
    const tokens = await exchange(
      c.s,
      queried,
      callback.searchParams.get('code')!,
      started.verifier,
      withQuery,
    );
    await expectStatus(tokens, 200);
    expect(decodeJwt(String(tokens.json.id_token)).sub).toBe(who.personId);
    for (const other of [`${c.app.redirectUri}?tenant=b&x=1`, `${c.app.redirectUri}?x=1&tenant=a`])
      await errorPage((await begin(own, other)).url);
  });

  test('oidcc-response-type-missing: invalid_request to the callback', async () => {
    const started = await begin(config, c.app.redirectUri);
    started.url.searchParams.delete('response_type');
    const error = await refusedAtCallback(started.url, started.state);
    expect(error.error).toBe('invalid_request');
    expect(error.error_description).toContain('response_type');
  });

  test('oidcc-ensure-request-object-with-redirect-uri: a signed request object is request_not_supported', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: c.app.redirectUri,
        scope: 'openid',
        state: 'jar-state',
        nonce: oidc.randomNonce(),
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      },
      privateKey,
    );
    expect(url.searchParams.has('request')).toBe(true);
    // The plain redirect_uri and state are beside the object (RFC 9101 leaves them out: added back).
    url.searchParams.set('redirect_uri', c.app.redirectUri);
    url.searchParams.set('state', 'jar-state');
    url.searchParams.set('response_type', 'code');
    const error = await refusedAtCallback(url, 'jar-state');
    expect(error.error).toBe('request_not_supported');
  });

  test('oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported', async () => {
    const started = await begin(config, c.app.redirectUri);
    const unsigned = new UnsecuredJWT({
      ...Object.fromEntries(started.url.searchParams),
      iss: client.client_id,
      aud: c.s.url,
    }).encode();
    started.url.searchParams.set('request', unsigned);
    const error = await refusedAtCallback(started.url, started.state);
    expect(error.error).toBe('request_not_supported');
    const byReference = await begin(config, c.app.redirectUri);
    byReference.url.searchParams.set('request_uri', 'urn:ietf:params:oauth:request_uri:abc');
    // A request_uri other than one this service answered at POST /oauth2/par (RFC 9126): an error page.
    expect(await errorPage(byReference.url)).toContain('invalid_request_uri');
  });

  test('oidcc-ensure-post-request-succeeds: the request as an auto-submitted form, POST', () =>
    inPage(async (page) => {
      const started = await begin(config, c.app.redirectUri);
      const endpoint = String(config.serverMetadata().authorization_endpoint);
      const fields = [...started.url.searchParams]
        .map(([n, v]) => `<input type="hidden" name="${n}" value="${v.replaceAll('"', '&quot;')}">`)
        .join('');
      // The application's page sends the browser on with a form, as an RP using POST does.
      await page.goto(c.app.redirectUri);
      await Promise.all([
        page.waitForURL((u) => u.origin === c.s.url),
        page.setContent(
          `<form method="post" action="${endpoint}">${fields}</form><script>document.forms[0].submit()</script>`,
        ),
      ]);
      await page.waitForSelector('#password');
      const callback = await typeSignIn(page, c.app, who);
      expect((await redeem(config, callback, started)).claims()!.sub).toBe(who.personId);
    }));

  test('oidcc-ensure-other-scope-order-succeeds and an unknown parameter is ignored', () =>
    inPage(async (_, context) => {
      const started = await begin(config, c.app.redirectUri, { scope: 'email openid', extra: 'foobar' });
      const callback = await signInWith(context, c, started.url, who);
      const tokens = await redeem(config, callback, started);
      expect(tokens.scope?.split(' ').sort()).toEqual(['email', 'openid']);
      expect((await oidc.fetchUserInfo(config, tokens.access_token, who.personId)).email).toBe(who.email);
    }));

  test('oidcc-ensure-request-with-acr-values-succeeds: acr in the ID token', () =>
    inPage(async (_, context) => {
      const started = await begin(config, c.app.redirectUri, { acr_values: '1 2' });
      const callback = await signInWith(context, c, started.url, who);
      const claims = (await redeem(config, callback, started)).claims()!;
      expect(typeof claims.acr).toBe('string');
      // Without acr_values (nor the claims parameter asking it) the ID token has none.
      const plain = await begin(config, c.app.redirectUri);
      const silent = await silently(context, c, plain.url);
      expect((await redeem(config, silent.landed!, plain)).claims()!.acr).toBeUndefined();
      // An essential acr the sign-in cannot meet fails it (OIDC Core 5.5.1.1), no lesser acr given.
      const essential = await begin(config, c.app.redirectUri, {
        claims: JSON.stringify({ id_token: { acr: { essential: true, values: ['urn:example:acr:gold'] } } }),
      });
      const page = await context.newPage();
      expect((await visit(page, essential.url, c.app)).landed).toBeUndefined();
      const refused = await typeSignIn(page, c.app, who);
      expect((await callbackError(refused, essential.state)).error).toBe('access_denied');
    }));
});
