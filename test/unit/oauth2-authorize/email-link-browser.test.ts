import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumPresent, launchChromium } from '../../helpers/chromium.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { until } from '../../helpers/webhooks.ts';
import { type AuthorizeService, discover, type MadeClient, opts, startAuthorizeService } from './fixture.ts';

/**
 * The hosted login's "Email me a sign-in link", in headless Chromium, links read from the development
 * outbox (DATA_DIR/outbox/index.jsonl): the link pressed in the login's own browser finishes the sign-in
 * there; pressed in another browser it confirms, and the login's window continues. A mail scanner's GET
 * signs nobody in, a link works once and for its own login only, and expires by the service's clock.
 */
const present = chromiumPresent('the hosted login email link test');

let s: AuthorizeService;
let browser: Browser;
let client: MadeClient;
let app: ReturnType<typeof Bun.serve>;
let redirectUri: string;
let dataDir: string;
const landed: URL[] = [];
const clock = manualClock(Date.now());
let seq = 0;

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
  dataDir = mkdtempSync(join(tmpdir(), 'email-link-'));
  s = await startAuthorizeService({
    clock,
    env: { DATA_DIR: dataDir, OAUTH2_LOGIN_TTL_SECONDS: '3600' },
  });
  client = await s.createClient({ redirect_uris: [redirectUri] });
  browser = await launchChromium();
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await s?.stop();
  app?.stop(true);
  rmSync(dataDir, { recursive: true, force: true });
});

/** A person holding a fresh email address. */
async function emailPerson(as: { orgId?: string; key?: string } = {}) {
  const value = `link-${process.pid}-${++seq}@example.com`;
  const made = await s.call('POST', '/persons', {
    ...as,
    body: { handles: [{ type: 'email_address', value }] },
  });
  await expectStatus(made, 201);
  return { personId: made.json.result.person_id as string, email: value };
}

/** The link the development outbox holds for `to`, waiting for it. */
async function linkSentTo(to: string): Promise<string> {
  const index = join(dataDir, 'outbox', 'index.jsonl');
  const find = () =>
    existsSync(index)
      ? readFileSync(index, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { to: string; link: string | null })
          .find((m) => m.to === to)?.link
      : undefined;
  await until(() => Boolean(find()), 15_000, `the link sent to ${to}`);
  return find()!;
}

async function begin(c: MadeClient = client) {
  const as = await discover(s);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: c.client_id,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid',
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  }).toString();
  return { as, url, verifier, state, nonce };
}

/** The ID token claims of the code the browser landed with for `started`. */
async function claimsOf(started: Awaited<ReturnType<typeof begin>>) {
  const callback = landed.filter((u) => u.searchParams.get('state') === started.state).at(-1);
  if (!callback) throw new Error(`no landing with state ${started.state}`);
  const c = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(started.as, c, callback, started.state);
  const res = await oauth.authorizationCodeGrantRequest(
    started.as,
    c,
    oauth.ClientSecretBasic(client.client_secret!),
    params,
    redirectUri,
    started.verifier,
    opts,
  );
  const tokens = await oauth.processAuthorizationCodeResponse(started.as, c, res, {
    expectedNonce: started.nonce,
    requireIdToken: true,
  });
  return oauth.getValidatedIdTokenClaims(tokens)!;
}

/** The login page, "Email me a sign-in link" for `email`: the check-your-email page and its challenge. */
async function askLink(page: Page, email: string, c: MadeClient = client) {
  const started = await begin(c);
  await page.goto(started.url.href);
  await page.fill('#handle', email);
  await page.click('text=Email me a sign-in link');
  await page.waitForSelector('text=Check your email');
  const challengeId = await page.locator('input[name=challenge_id]').first().getAttribute('value');
  return { started, challengeId: challengeId ?? '' };
}

/** A form posted to the service with the cookies of `context`, as its page would. */
async function post(context: BrowserContext, path: string, fields: Record<string, string>) {
  const cookie = (await context.cookies(s.url)).map((c) => `${c.name}=${c.value}`).join('; ');
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: s.url },
    body: new URLSearchParams(fields).toString(),
  });
}

const landing = () => `${redirectUri}?**`;

describe.skipIf(!present)('a sign-in link by email on the hosted login', () => {
  it('pressed in the same browser, finishes the sign-in there; amr ["otp"]; the link is then spent', async () => {
    const who = await emailPerson();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const asked = await askLink(page, who.email);
      const link = await linkSentTo(who.email);
      expect(link.startsWith(`${s.url}/oauth2/authorize/email-link/sign-in?token=`)).toBe(true);

      const tab = await context.newPage();
      const refused: string[] = [];
      for (const p of [page, tab])
        p.on('console', (m) => {
          if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text());
        });
      await tab.goto(link);
      expect(await tab.title()).toBe('Sign in to Acme App');
      await Promise.all([tab.waitForURL(landing()), tab.click('text=Sign me in')]);
      const claims = await claimsOf(asked.started);
      expect(claims.sub).toBe(who.personId);
      expect(claims.amr).toEqual(['otp']);
      expect(claims.authenticated_methods).toEqual(['email_link']);
      expect(refused).toEqual([]);
      const succeeded = await s.eventsNamed('AuthenticationSucceeded_v1');
      expect(succeeded.at(-1)).toMatchObject({ person_id: who.personId, success_authn_method: 'email_link' });

      // Opened again: the link is used.
      const again = await tab.goto(link);
      expect(again?.status()).toBe(400);
      expect(await tab.locator('p.error').textContent()).toContain('used already');
    } finally {
      await context.close();
    }
  }, 60_000);

  it("pressed in another browser, confirms it; the login's window continues with its Continue", async () => {
    const who = await emailPerson();
    const first = await browser.newContext();
    const other = await browser.newContext();
    try {
      const page = await first.newPage();
      const asked = await askLink(page, who.email);
      const link = await linkSentTo(who.email);

      // Continue before the link is pressed: not yet.
      await page.click('form.login button');
      await page.waitForSelector('text=has not been pressed yet');

      const elsewhere = await other.newPage();
      await elsewhere.goto(link);
      await elsewhere.click('text=Sign me in');
      await elsewhere.waitForSelector('p.done');
      expect(await elsewhere.locator('p.done').textContent()).toContain('press Continue there');
      // The other browser got no session and no code.
      expect(landed.some((u) => u.searchParams.get('state') === asked.started.state)).toBe(false);

      await Promise.all([page.waitForURL(landing()), page.click('form.login button')]);
      const claims = await claimsOf(asked.started);
      expect(claims.sub).toBe(who.personId);
      expect(claims.amr).toEqual(['otp']);
    } finally {
      await first.close();
      await other.close();
    }
  }, 60_000);

  it("a mail scanner's GET of the link signs nobody in", async () => {
    const who = await emailPerson();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const asked = await askLink(page, who.email);
      const link = await linkSentTo(who.email);
      const before = (await s.eventsNamed('AuthenticationSucceeded_v1', 0)).length;

      const scanned = await fetch(link);
      await expectStatus(scanned, 200);
      expect(await scanned.text()).toContain('Sign me in');

      // Nothing was confirmed: the login's window still waits, and nobody signed in.
      const waiting = await post(context, '/oauth2/authorize/email-link/continue', {
        csrf_token: await csrfOf(page),
        challenge_id: asked.challengeId,
      });
      await expectStatus(waiting.clone(), 200);
      expect(await waiting.text()).toContain('has not been pressed yet');
      expect((await s.eventsNamed('AuthenticationSucceeded_v1', 0)).length).toBe(before);
    } finally {
      await context.close();
    }
  }, 60_000);

  it("is refused to another login (of this organization or another) and stays its own login's", async () => {
    const who = await emailPerson();
    const owner = await browser.newContext();
    const other = await browser.newContext();
    const stranger = await browser.newContext();
    try {
      const page = await owner.newPage();
      const asked = await askLink(page, who.email);
      const link = await linkSentTo(who.email);
      const pressed = await other.newPage();
      await pressed.goto(link);
      await pressed.click('text=Sign me in');
      await pressed.waitForSelector('p.done');

      // A login of the stranger's own, in this organization, posts the owner's challenge: refused.
      const mine = await stranger.newPage();
      const theirs = await emailPerson();
      await askLink(mine, theirs.email);
      const refused = await post(stranger, '/oauth2/authorize/email-link/continue', {
        csrf_token: await csrfOf(mine),
        challenge_id: asked.challengeId,
      });
      await expectStatus(refused.clone(), 401);
      expect(await refused.text()).toContain('cannot sign you in');

      // And a login of another organization.
      const { organization, apiKey } = await s.service.ctx.orgs.create('Other');
      const otherClient = await s.createClient(
        { redirect_uris: [redirectUri] },
        { orgId: organization.id, key: apiKey },
      );
      const otherPerson = await emailPerson({ orgId: organization.id, key: apiKey });
      const abroad = await stranger.newPage();
      await askLink(abroad, otherPerson.email, otherClient);
      const elsewhere = await post(stranger, '/oauth2/authorize/email-link/continue', {
        csrf_token: await csrfOf(abroad),
        challenge_id: asked.challengeId,
      });
      await expectStatus(elsewhere, 401);

      // The owner's window still finishes its sign-in with it.
      await Promise.all([page.waitForURL(landing()), page.click('form.login button')]);
      expect((await claimsOf(asked.started)).sub).toBe(who.personId);
    } finally {
      await owner.close();
      await other.close();
      await stranger.close();
    }
  }, 60_000);

  // Last: the service's clock moves on.
  it('expires with the API links (10 minutes), by the service clock', async () => {
    const who = await emailPerson();
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await askLink(page, who.email);
      const link = await linkSentTo(who.email);
      clock.advance(11 * 60_000);
      const tab = await context.newPage();
      const opened = await tab.goto(link);
      expect(opened?.status()).toBe(400);
      expect(await tab.locator('p.error').textContent()).toContain('expired');
      const late = await post(context, '/oauth2/authorize/email-link/continue', {
        csrf_token: await csrfOf(page),
        challenge_id: (await page.locator('input[name=challenge_id]').first().getAttribute('value')) ?? '',
      });
      await expectStatus(late, 401);
    } finally {
      await context.close();
    }
  }, 60_000);
});

/** The login's CSRF token on the check-your-email page. */
async function csrfOf(page: Page): Promise<string> {
  return (await page.locator('input[name=csrf_token]').first().getAttribute('value')) ?? '';
}
