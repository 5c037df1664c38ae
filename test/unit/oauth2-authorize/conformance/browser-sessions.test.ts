// What a person's browser sees of sign-in sessions, in headless Chromium with openid-client as the
// relying parties: response_mode=form_post (OAuth 2.0 Form Post Response Mode), single sign-on across
// the organization's clients, and the consent page of a third-party client (first_party false).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../../helpers/chromium.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import type { MadeClient } from '../fixture.ts';
import {
  begin,
  type Conformance,
  type Person,
  redeem,
  signInWith,
  startConformance,
  typeSignIn,
  visit,
} from './relying-party.ts';

const present = chromiumPresent('the sign-in session browser tests (form_post, SSO, consent)');

let browser: Browser;
let c: Conformance;
let first: MadeClient;
let second: MadeClient;
let who: Person;

beforeAll(async () => {
  if (!present) return;
  browser = await launchChromium();
  c = await startConformance(browser);
  first = await c.client({ client_name: 'First App' });
  second = await c.client({ client_name: 'Second App' });
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

/** A page that records every page of the service it shows (HTML answers) and every console error. */
async function watched(context: BrowserContext) {
  const page = await context.newPage();
  const pages: { url: string; status: number; csp: string | undefined }[] = [];
  const problems: string[] = [];
  page.on('response', (r) => {
    if (r.url().startsWith(c.s.url) && r.headers()['content-type']?.startsWith('text/html'))
      pages.push({ url: r.url(), status: r.status(), csp: r.headers()['content-security-policy'] });
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  return { page, pages, problems };
}

/** Waits for the browser to reach the application; answers the request it arrived with. */
async function arrival(page: Page, act: Promise<unknown>) {
  const before = c.app.landed.length;
  await Promise.all([page.waitForURL((u) => u.origin === c.app.origin), act]);
  const landed = c.app.landed.slice(before);
  expect(landed).toHaveLength(1);
  return landed[0]!;
}

/** Signs in for `client` in the context: the session of the organization starts. */
async function signInFor(context: BrowserContext, client: MadeClient) {
  const config = await c.rp(client);
  const started = await begin(config, c.app.redirectUri);
  const callback = await signInWith(context, c, started.url, who);
  return (await redeem(config, callback, started)).claims()!;
}

/** The OAuth error of a callback, as openid-client reads it (it refuses the response). */
async function callbackError(config: oidc.Configuration, callback: URL, state: string) {
  try {
    await oidc.authorizationCodeGrant(config, callback, { expectedState: state });
  } catch (error) {
    if (error instanceof oidc.AuthorizationResponseError) return error.error;
    throw error;
  }
  throw new Error(`a code was answered: ${callback.href}`);
}

describe.skipIf(!present)('response_mode=form_post in Chromium', () => {
  test('the sign-in posts the code to the application; the page runs its one script only', () =>
    inBrowser(async (context) => {
      const config = await c.rp(first);
      const started = await begin(config, c.app.redirectUri, { response_mode: 'form_post' });
      const { page, pages, problems } = await watched(context);
      await visit(page, started.url, c.app);
      await page.fill('#handle', who.username);
      await page.fill('#password', who.password);
      const posted = await arrival(page, page.click('form button[type=submit]'));
      expect(posted.method).toBe('POST');
      const form = new URLSearchParams(posted.body);
      expect(form.get('state')).toBe(started.state);
      expect(form.get('iss')).toBe(c.s.url);
      // The callback's URL has no code: it came in the body.
      expect(posted.url.search).toBe('');
      const tokens = await redeem(config, posted.request(), started);
      expect(tokens.claims()!.sub).toBe(who.personId);

      // The auto-submitting page: its CSP allows that one script by hash and posts only to the client.
      const submitting = pages.at(-1)!;
      const hash = createHash('sha256').update('document.forms[0].submit()').digest('base64');
      const csp = submitting.csp!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain(`script-src 'sha256-${hash}'`);
      expect(
        csp
          .match(/script-src ([^;]*)/)![1]!
          .trim()
          .split(' '),
      ).toHaveLength(1);
      expect(csp).toContain(`form-action 'self' ${c.app.origin}`);
      expect(problems).toEqual([]);
    }));

  test('a session answers form_post with no login page, the posting page only', () =>
    inBrowser(async (context) => {
      await signInFor(context, first);
      const config = await c.rp(second);
      const started = await begin(config, c.app.redirectUri, { response_mode: 'form_post', prompt: 'none' });
      const { page, pages, problems } = await watched(context);
      const posted = await arrival(page, page.goto(started.url.href));
      expect(posted.method).toBe('POST');
      expect(pages).toHaveLength(1);
      expect((await redeem(config, posted.request(), started)).claims()!.aud).toBe(second.client_id);
      expect(problems).toEqual([]);
    }));

  test('a hostile state is posted back as text, never run as markup', () =>
    inBrowser(async (context) => {
      const config = await c.rp(first);
      const state = `"></form><script>alert(document.domain)</script><form x="`;
      const started = await begin(config, c.app.redirectUri, {
        response_mode: 'form_post',
        prompt: 'none',
        state,
      });
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      const posted = await arrival(page, page.goto(started.url.href));
      expect(new URLSearchParams(posted.body).get('state')).toBe(state);
      expect(dialogs).toEqual([]);
    }));

  test('a refusal is posted too (login_required without a session)', () =>
    inBrowser(async (context) => {
      const config = await c.rp(first);
      const started = await begin(config, c.app.redirectUri, { response_mode: 'form_post', prompt: 'none' });
      const page = await context.newPage();
      const posted = await arrival(page, page.goto(started.url.href));
      const form = new URLSearchParams(posted.body);
      expect(form.get('error')).toBe('login_required');
      expect(form.get('state')).toBe(started.state);
      expect(form.has('code')).toBe(false);
    }));
});

describe.skipIf(!present)('single sign-on across the organization’s clients in Chromium', () => {
  test('signed in on the first client, the second gets its code with no page shown', () =>
    inBrowser(async (context) => {
      const signedIn = await signInFor(context, first);
      c.clock.advance(3000);
      const config = await c.rp(second);
      const started = await begin(config, c.app.redirectUri);
      const { page, pages } = await watched(context);
      const landed = await arrival(page, page.goto(started.url.href));
      expect(pages).toEqual([]);
      const claims = (await redeem(config, landed.url, started)).claims()!;
      expect(claims.aud).toBe(second.client_id);
      expect(claims.sub).toBe(who.personId);
      expect(claims.sid).toBe(signedIn.sid);
      expect(claims.auth_time).toBe(signedIn.auth_time);
      expect(claims.amr).toEqual(['pwd']);
    }));

  test('an authorization request POSTed from another site is answered by the session too', () =>
    inBrowser(async (context) => {
      await signInFor(context, first);
      const config = await c.rp(second);
      const started = await begin(config, c.app.redirectUri, { prompt: 'none' });
      const fields = [...started.url.searchParams]
        .map(([n, v]) => `<input type="hidden" name="${n}" value="${v}">`)
        .join('');
      // The application's page on another site (hooks.test, not 127.0.0.1): its form POST carries no
      // SameSite=Lax cookie of the service.
      const page = await context.newPage();
      await page.goto(`http://app.hooks.test:${new URL(c.app.origin).port}/`);
      const before = c.app.landed.length;
      await page.setContent(
        `<form method="post" action="${config.serverMetadata().authorization_endpoint}">${fields}</form><script>document.forms[0].submit()</script>`,
        { waitUntil: 'commit' },
      );
      await page.waitForURL((u) => u.origin === c.app.origin, { waitUntil: 'commit' });
      const landed = c.app.landed.slice(before);
      expect(landed).toHaveLength(1);
      expect((await redeem(config, landed[0]!.url, started)).claims()!.aud).toBe(second.client_id);

      // Without a session, the same way ends on the login page, and the sign-in there completes it.
      await inBrowser(async (fresh) => {
        const login = await begin(config, c.app.redirectUri);
        const form = [...login.url.searchParams]
          .map(([n, v]) => `<input type="hidden" name="${n}" value="${v}">`)
          .join('');
        const other = await fresh.newPage();
        await other.goto(`http://app.hooks.test:${new URL(c.app.origin).port}/`);
        await other.setContent(
          `<form method="post" action="${config.serverMetadata().authorization_endpoint}">${form}</form><script>document.forms[0].submit()</script>`,
          { waitUntil: 'commit' },
        );
        await other.waitForSelector('#password');
        const callback = await typeSignIn(other, c.app, who);
        expect((await redeem(config, callback, login)).claims()!.sub).toBe(who.personId);
      });
    }));

  test('another organization’s client in the same browser is not signed in', () =>
    inBrowser(async (context) => {
      await signInFor(context, first);
      const { organization, apiKey } = await c.s.service.ctx.orgs.create('Elsewhere');
      const theirs = await c.s.createClient(
        { redirect_uris: [c.app.redirectUri] },
        { orgId: organization.id, key: apiKey },
      );
      const config = await c.rp(theirs);
      const started = await begin(config, c.app.redirectUri, { prompt: 'none' });
      const page = await context.newPage();
      const landed = await arrival(page, page.goto(started.url.href));
      expect(await callbackError(config, landed.url, started.state)).toBe('login_required');
    }));

  test('another browser shares nothing: its first request shows the login page', () =>
    inBrowser(async (context) => {
      await signInFor(context, first);
      await inBrowser(async (other) => {
        const started = await begin(await c.rp(second), c.app.redirectUri);
        const page = await other.newPage();
        const at = await visit(page, started.url, c.app);
        expect(at.landed).toBeUndefined();
        expect(await page.locator('#password').count()).toBe(1);
      });
    }));
});

describe.skipIf(!present)('consent for a third-party client (first_party false) in Chromium', () => {
  test('the page names the client and the scopes; Allow answers a code; revoked, prompt=none says consent_required', () =>
    inBrowser(async (context) => {
      const partner = await c.client({
        client_name: 'Partner App',
        first_party: false,
        scopes: ['openid', 'email', 'read'],
      });
      await signInFor(context, first);
      const config = await c.rp(partner);

      // Deny first: access_denied to the application, nothing remembered.
      const denied = await begin(config, c.app.redirectUri, { scope: 'openid email' });
      const { page } = await watched(context);
      await visit(page, denied.url, c.app);
      const refused = await arrival(page, page.click('button[value=deny]'));
      expect(await callbackError(config, refused.url, denied.state)).toBe('access_denied');

      const started = await begin(config, c.app.redirectUri, { scope: 'openid email' });
      const shown = await visit(page, started.url, c.app);
      expect(shown.landed).toBeUndefined();
      await expectStatus({ status: shown.status }, 200);
      expect(await page.title()).toBe('Allow Partner App access to your account?');
      expect(await page.locator('h1').textContent()).toContain('Partner App');
      const scopes = await page
        .locator('.scopes li')
        .evaluateAll((items) => items.map((li) => li.getAttribute('data-scope')));
      expect(scopes).toEqual(['openid', 'email']);
      const allowed = await arrival(page, page.click('button[value=allow]'));
      const tokens = await redeem(config, allowed.url, started);
      expect(tokens.claims()!.sub).toBe(who.personId);
      expect((await oidc.fetchUserInfo(config, tokens.access_token, who.personId)).email).toBe(who.email);

      // Remembered: listed, and prompt=none answers a code.
      const listed = await c.s.call('GET', `/persons/${who.personId}/oauth2-consents`);
      await expectStatus(listed, 200);
      expect(listed.json.result).toEqual([
        expect.objectContaining({ client_id: partner.client_id, client_name: 'Partner App' }),
      ]);
      const silent = await begin(config, c.app.redirectUri, { scope: 'openid email', prompt: 'none' });
      const again = await arrival(page, page.goto(silent.url.href));
      expect((await redeem(config, again.url, silent)).claims()!.sub).toBe(who.personId);

      // More scopes than allowed ask again.
      const more = await begin(config, c.app.redirectUri, { scope: 'openid email read', prompt: 'none' });
      const asked = await arrival(page, page.goto(more.url.href));
      expect(await callbackError(config, asked.url, more.state)).toBe('consent_required');

      const revoked = await c.s.call(
        'DELETE',
        `/persons/${who.personId}/oauth2-consents/${partner.client_id}`,
      );
      await expectStatus(revoked, 204);
      const after = await begin(config, c.app.redirectUri, { scope: 'openid email', prompt: 'none' });
      const landed = await arrival(page, page.goto(after.url.href));
      expect(await callbackError(config, landed.url, after.state)).toBe('consent_required');
      // The withdrawal took the application's grant along: its refresh token no longer refreshes.
      await expect(oidc.refreshTokenGrant(await c.rp(partner), tokens.refresh_token!)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    }));

  test('with response_mode=form_post, Allow posts the code to the application', () =>
    inBrowser(async (context) => {
      const partner = await c.client({ client_name: 'Partner Post', first_party: false });
      await signInFor(context, first);
      const config = await c.rp(partner);
      const started = await begin(config, c.app.redirectUri, { response_mode: 'form_post' });
      const { page, problems } = await watched(context);
      await visit(page, started.url, c.app);
      expect(await page.title()).toBe('Allow Partner Post access to your account?');
      const posted = await arrival(page, page.click('button[value=allow]'));
      expect(posted.method).toBe('POST');
      expect((await redeem(config, posted.request(), started)).claims()!.aud).toBe(partner.client_id);
      expect(problems).toEqual([]);
    }));

  test('a first sign-in for the third-party client goes on to its consent page', () =>
    inBrowser(async (context) => {
      const partner = await c.client({ client_name: 'Partner Two', first_party: false });
      const config = await c.rp(partner);
      const started = await begin(config, c.app.redirectUri);
      const page = await context.newPage();
      await visit(page, started.url, c.app);
      await page.fill('#handle', who.username);
      await page.fill('#password', who.password);
      await Promise.all([
        page.waitForSelector('button[value=allow]'),
        page.click('form button[type=submit]'),
      ]);
      expect(await page.title()).toBe('Allow Partner Two access to your account?');
      const allowed = await arrival(page, page.click('button[value=allow]'));
      expect((await redeem(config, allowed.url, started)).claims()!.sub).toBe(who.personId);
    }));
});
