// OpenID Foundation "Basic OP" test plan, the modules about the sign-in session: prompt, max_age,
// login_hint and the locales, in one Chromium browser whose session cookie carries from one request to
// the next, as a person's does.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../../helpers/chromium.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import type { MadeClient } from '../fixture.ts';
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

const present = chromiumPresent('the OIDC Basic OP conformance suite (prompt and max_age)');

let browser: Browser;
let c: Conformance;
let client: MadeClient;
let who: Person;

beforeAll(async () => {
  if (!present) return;
  browser = await launchChromium();
  c = await startConformance(browser);
  client = await c.client();
  who = await c.person();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await c?.stop();
});

/** A browser for one test, closed after it. */
async function inBrowser<T>(run: (context: BrowserContext) => Promise<T>): Promise<T> {
  const context = await c.browser();
  try {
    return await run(context);
  } finally {
    await context.close();
  }
}

/** Signs in with a first request in this browser: the session starts; its ID token's claims. */
async function firstSignIn(context: BrowserContext) {
  const config = await c.rp(client);
  const started = await begin(config, c.app.redirectUri);
  const callback = await signInWith(context, c, started.url, who);
  return (await redeem(config, callback, started)).claims()!;
}

/** The OAuth error openid-client reads from a callback (it refuses the response). */
async function callbackError(config: oidc.Configuration, callback: URL, state: string) {
  try {
    await oidc.authorizationCodeGrant(config, callback, { expectedState: state });
  } catch (error) {
    if (error instanceof oidc.AuthorizationResponseError) return error.error;
    throw error;
  }
  throw new Error(`a code was answered: ${callback.href}`);
}

describe.skipIf(!present)('OIDC Basic OP: prompt, max_age and hints (openid-client, Chromium)', () => {
  test('oidcc-prompt-none-not-logged-in: login_required to the callback, with state, no page', () =>
    inBrowser(async (context) => {
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { prompt: 'none' });
      const arrival = await silently(context, c, started.url);
      expect(arrival.landed?.searchParams.get('state')).toBe(started.state);
      expect(arrival.landed?.searchParams.get('iss')).toBe(c.s.url);
      expect(await callbackError(config, arrival.landed!, started.state)).toBe('login_required');
    }));

  test('oidcc-prompt-none-logged-in: a code with no page; the same person and auth_time', () =>
    inBrowser(async (context) => {
      const signedIn = await firstSignIn(context);
      c.clock.advance(5000);
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { prompt: 'none' });
      const arrival = await silently(context, c, started.url);
      expect(arrival.landed).toBeDefined();
      const claims = (await redeem(config, arrival.landed!, started)).claims()!;
      expect(claims.sub).toBe(who.personId);
      expect(claims.auth_time).toBe(signedIn.auth_time);
      expect(claims.sid).toBe(signedIn.sid);
      expect(claims.nonce).toBe(started.nonce);
    }));

  test('oidcc-prompt-login: the login page again despite the session; auth_time moves on', () =>
    inBrowser(async (context) => {
      const signedIn = await firstSignIn(context);
      c.clock.advance(5000);
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { prompt: 'login' });
      const page = await context.newPage();
      const opened = await visit(page, started.url, c.app);
      expect(opened.landed).toBeUndefined();
      await expectStatus({ status: opened.status }, 200);
      expect(await page.locator('#password').count()).toBe(1);
      const callback = await typeSignIn(page, c.app, who);
      await page.close();
      const claims = (await redeem(config, callback, started)).claims()!;
      expect(claims.sub).toBe(who.personId);
      expect(claims.auth_time!).toBeGreaterThanOrEqual(signedIn.auth_time! + 5);
    }));

  test('prompt=consent for the organization’s own client: the consent page, then a code', () =>
    inBrowser(async (context) => {
      await firstSignIn(context);
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { prompt: 'consent' });
      const page = await context.newPage();
      const opened = await visit(page, started.url, c.app);
      expect(opened.landed).toBeUndefined();
      expect(await page.title()).toBe('Allow Acme App access to your account?');
      await Promise.all([
        page.waitForURL((u) => u.origin === c.app.origin),
        page.click('button[value=allow]'),
      ]);
      const claims = (await redeem(config, new URL(page.url()), started)).claims()!;
      await page.close();
      expect(claims.sub).toBe(who.personId);
      // prompt=none with prompt=consent is a request error.
      const both = await begin(config, c.app.redirectUri, { prompt: 'none consent' });
      const refused = await silently(context, c, both.url);
      expect(await callbackError(config, refused.landed!, both.state)).toBe('invalid_request');
    }));

  test('oidcc-max-age-1: a sign-in older than max_age is asked again; auth_time says when', () =>
    inBrowser(async (context) => {
      const signedIn = await firstSignIn(context);
      c.clock.advance(2000);
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { max_age: '1' });
      const page = await context.newPage();
      const opened = await visit(page, started.url, c.app);
      expect(opened.landed).toBeUndefined();
      const callback = await typeSignIn(page, c.app, who);
      await page.close();
      // openid-client checks auth_time is present and within max_age of its (the service's) clock.
      const claims = (await redeem(config, callback, started, { maxAge: 1 })).claims()!;
      expect(claims.auth_time!).toBeGreaterThan(signedIn.auth_time!);
      expect(claims.auth_time).toBe(Math.floor(c.clock.now() / 1000));
    }));

  test('oidcc-max-age-10000: a recent sign-in answers with no page, auth_time the sign-in’s', () =>
    inBrowser(async (context) => {
      const signedIn = await firstSignIn(context);
      c.clock.advance(60_000);
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { max_age: '10000' });
      const arrival = await silently(context, c, started.url);
      expect(arrival.landed).toBeDefined();
      const claims = (await redeem(config, arrival.landed!, started, { maxAge: 10000 })).claims()!;
      expect(claims.auth_time).toBe(signedIn.auth_time);
    }));

  test('max_age=0 is prompt=login: the page even for a session signed in this second', () =>
    inBrowser(async (context) => {
      await firstSignIn(context);
      const config = await c.rp(client);
      const none = await begin(config, c.app.redirectUri, { max_age: '0', prompt: 'none' });
      const refused = await silently(context, c, none.url);
      expect(await callbackError(config, refused.landed!, none.state)).toBe('login_required');
      const started = await begin(config, c.app.redirectUri, { max_age: '0' });
      const page = await context.newPage();
      expect((await visit(page, started.url, c.app)).landed).toBeUndefined();
      const callback = await typeSignIn(page, c.app, who);
      await page.close();
      expect((await redeem(config, callback, started, { maxAge: 0 })).claims()!.sub).toBe(who.personId);
    }));

  test('claims sub with a value: a session of someone else does not answer (OIDC Core 5.5.1)', () =>
    inBrowser(async (context) => {
      await firstSignIn(context);
      const other = await c.person();
      const config = await c.rp(client);
      const named = (personId: string) => JSON.stringify({ id_token: { sub: { value: personId } } });
      const none = await begin(config, c.app.redirectUri, { prompt: 'none', claims: named(other.personId) });
      const refused = await silently(context, c, none.url);
      expect(await callbackError(config, refused.landed!, none.state)).toBe('login_required');
      const own = await begin(config, c.app.redirectUri, { prompt: 'none', claims: named(who.personId) });
      const answered = await silently(context, c, own.url);
      expect((await redeem(config, answered.landed!, own)).claims()!.sub).toBe(who.personId);
    }));

  test('oidcc-login-hint: the handle field comes filled in; the person types the password only', () =>
    inBrowser(async (context) => {
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { login_hint: who.username });
      const page = await context.newPage();
      await visit(page, started.url, c.app);
      expect(await page.inputValue('#handle')).toBe(who.username);
      const callback = await typeSignIn(page, c.app, who, { handle: false });
      await page.close();
      expect((await redeem(config, callback, started)).claims()!.sub).toBe(who.personId);

      // A hint is text in the field, never markup in the page.
      const hostile = '"><img src=x onerror=alert(1)>';
      const dialogs: string[] = [];
      const other = await context.newPage();
      other.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const again = await begin(config, c.app.redirectUri, { login_hint: hostile, prompt: 'login' });
      await visit(other, again.url, c.app);
      expect(await other.inputValue('#handle')).toBe(hostile);
      expect(await other.locator('img').count()).toBe(0);
      expect(dialogs).toEqual([]);
    }));

  test('oidcc-ui-locales and oidcc-claims-locales: accepted, the sign-in goes on', () =>
    inBrowser(async (context) => {
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri, { ui_locales: 'se', claims_locales: 'se' });
      const callback = await signInWith(context, c, started.url, who);
      expect((await redeem(config, callback, started)).claims()!.sub).toBe(who.personId);
    }));

  test('oidcc-id-token-hint: prompt=none with the ID token as id_token_hint', () =>
    inBrowser(async (context) => {
      const config = await c.rp(client);
      const started = await begin(config, c.app.redirectUri);
      const tokens = await redeem(config, await signInWith(context, c, started.url, who), started);
      const again = await begin(config, c.app.redirectUri, {
        prompt: 'none',
        id_token_hint: tokens.id_token!,
      });
      const answered = await silently(context, c, again.url);
      expect((await redeem(config, answered.landed!, again)).claims()!.sub).toBe(who.personId);
    }));
});
