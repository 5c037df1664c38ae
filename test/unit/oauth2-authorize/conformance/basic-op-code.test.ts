// OpenID Foundation "Basic OP" test plan, the code flow and its tokens: a person signs in in headless
// Chromium, the application receives the callback, openid-client exchanges the code and calls userinfo.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
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
  type Started,
  signInWith,
  startConformance,
  visit,
} from './relying-party.ts';

const present = chromiumPresent('the OIDC Basic OP conformance suite (code flow)');

let browser: Browser;
let c: Conformance;
let client: MadeClient;
let config: oidc.Configuration;
let who: Person;
/** One sign-in's tokens, read by the ID token and userinfo modules. */
let first: { started: Started; tokens: Awaited<ReturnType<typeof redeem>>; idToken: string };

/** A sign-in in a fresh browser and its callback, for a request openid-client builds. */
async function signedIn(extra: Record<string, string> = {}, o: { nonce?: boolean } = {}) {
  const started = await begin(config, c.app.redirectUri, extra, o);
  const context: BrowserContext = await c.browser();
  try {
    const callback = await signInWith(context, c, started.url, who);
    return { started, callback };
  } finally {
    await context.close();
  }
}

beforeAll(async () => {
  if (!present) return;
  browser = await launchChromium();
  c = await startConformance(browser);
  client = await c.client();
  config = await c.rp(client);
  who = await c.person();
  const { started, callback } = await signedIn();
  const tokens = await redeem(config, callback, started);
  first = { started, tokens, idToken: tokens.id_token! };
});
afterAll(async () => {
  if (!present) return;
  await browser?.close();
  await c?.stop();
});

/** openid-client's refusal of a token request: the OAuth error the server answered. */
async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return error.error;
    throw error;
  }
  throw new Error('the request succeeded; a refusal was expected');
}

describe.skipIf(!present)('OIDC Basic OP: the code flow (openid-client, Chromium)', () => {
  test('oidcc-server: sign-in, code, tokens from discovery', () => {
    const { tokens, started } = first;
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(typeof tokens.access_token).toBe('string');
    expect(tokens.expires_in).toBeGreaterThan(0);
    expect(typeof tokens.refresh_token).toBe('string');
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(who.personId);
    expect(claims.nonce).toBe(started.nonce);
    expect(claims.iss).toBe(c.s.url);
  });

  test('oidcc-server with client_secret_post, and a public client (none, PKCE)', async () => {
    const post = await oidc.discovery(
      new URL(c.s.url),
      client.client_id,
      { [oidc.clockSkew]: Math.round((c.clock.now() - Date.now()) / 1000) },
      oidc.ClientSecretPost(client.client_secret!),
      { execute: [oidc.allowInsecureRequests] },
    );
    const started = await begin(post, c.app.redirectUri);
    const context = await c.browser();
    try {
      const callback = await signInWith(context, c, started.url, who);
      expect((await redeem(post, callback, started)).claims()!.sub).toBe(who.personId);
      const open = await c.client({ client_name: 'Browser App', public: true, scopes: ['openid'] });
      expect(open.client_secret).toBeUndefined();
      const spa = await c.rp(open);
      const again = await begin(spa, c.app.redirectUri, { scope: 'openid' });
      // The session from the sign-in above answers the public client too.
      const page = await context.newPage();
      const landed = await visit(page, again.url, c.app);
      expect((await redeem(spa, landed.landed!, again)).claims()!.aud).toBe(open.client_id);
    } finally {
      await context.close();
    }
  });

  test('oidcc-id-token-signature: ES256, verified with the jwks_uri keys', async () => {
    const keys = createRemoteJWKSet(new URL(String(config.serverMetadata().jwks_uri)));
    const { protectedHeader, payload } = await jwtVerify(first.idToken, keys, {
      issuer: c.s.url,
      audience: client.client_id,
      algorithms: ['ES256'],
      currentDate: new Date(c.clock.now()),
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.sub).toBe(who.personId);
    // One byte of the signature changed: not a token of the service.
    const [h, p, sig] = first.idToken.split('.') as [string, string, string];
    const tampered = `${h}.${p}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`;
    await expect(jwtVerify(tampered, keys, { currentDate: new Date(c.clock.now()) })).rejects.toThrow();
  });

  test('oidcc-id-token-kid: the header names a key of the key set', async () => {
    const { kid } = decodeProtectedHeader(first.idToken);
    expect(typeof kid).toBe('string');
    const res = await fetch(String(config.serverMetadata().jwks_uri));
    await expectStatus(res, 200);
    const { keys } = (await res.json()) as { keys: { kid: string }[] };
    expect(keys.filter((k) => k.kid === kid)).toHaveLength(1);
  });

  test('oidcc-id-token-aud: the audience is the client (and azp, when present, too)', () => {
    const claims = decodeJwt(first.idToken);
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    expect(aud).toContain(client.client_id);
    if (aud.length > 1 || claims.azp !== undefined) expect(claims.azp).toBe(client.client_id);
  });

  test('oidcc-id-token-iat: issued now by the service clock, expiring after', () => {
    const claims = decodeJwt(first.idToken);
    const now = Math.floor(c.clock.now() / 1000);
    expect(Number.isInteger(claims.iat)).toBe(true);
    expect(Math.abs(now - claims.iat!)).toBeLessThanOrEqual(5);
    expect(claims.exp!).toBeGreaterThan(claims.iat!);
    expect(claims.auth_time as number).toBeLessThanOrEqual(claims.iat!);
  });

  test('oidcc-id-token-sub: the person, the same at every sign-in and at userinfo', async () => {
    const again = await signedIn();
    const tokens = await redeem(config, again.callback, again.started);
    expect(tokens.claims()!.sub).toBe(first.tokens.claims()!.sub);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, who.personId);
    expect(info.sub).toBe(who.personId);
  });

  test('oidcc-userinfo-get: userinfo by GET with the bearer token', async () => {
    const info = await oidc.fetchUserInfo(config, first.tokens.access_token, who.personId);
    expect(info).toMatchObject({ sub: who.personId, email: who.email, email_verified: true });
  });

  test('oidcc-userinfo-post-header: userinfo by POST with the token in the Authorization header', async () => {
    const res = await fetch(String(config.serverMetadata().userinfo_endpoint), {
      method: 'POST',
      headers: { authorization: `Bearer ${first.tokens.access_token}` },
    });
    await expectStatus(res, 200);
    expect(await res.json()).toMatchObject({ sub: who.personId, email: who.email });
  });

  test('oidcc-userinfo-post-body: userinfo by POST with access_token in the form body', async () => {
    const res = await fetch(String(config.serverMetadata().userinfo_endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: first.tokens.access_token }).toString(),
    });
    await expectStatus(res, 200);
    expect(await res.json()).toMatchObject({ sub: who.personId, email: who.email });
  });

  test('oidcc-scope-email: email and email_verified at userinfo for the email scope, not without it', async () => {
    const info = await oidc.fetchUserInfo(config, first.tokens.access_token, who.personId);
    expect(info.email).toBe(who.email);
    expect(info.email_verified).toBe(true);
    const bare = await signedIn({ scope: 'openid' });
    const tokens = await redeem(config, bare.callback, bare.started);
    const without = await oidc.fetchUserInfo(config, tokens.access_token, who.personId);
    expect(without.email).toBeUndefined();
    expect(without.email_verified).toBeUndefined();
  });

  test('oidcc-ensure-request-without-nonce-succeeds-for-code-flow', async () => {
    const { started, callback } = await signedIn({}, { nonce: false });
    expect(started.url.searchParams.has('nonce')).toBe(false);
    const tokens = await redeem(config, callback, started);
    expect(tokens.claims()!.nonce).toBeUndefined();
    expect(tokens.claims()!.sub).toBe(who.personId);
  });

  test('nonce: echoed exactly; an empty or oversized nonce is refused; a wrong one fails the RP check', async () => {
    const odd = 'n-0 ~._+/=é';
    const { started, callback } = await signedIn({ nonce: odd });
    const tokens = await redeem(config, callback, { ...started, nonce: odd });
    expect(tokens.claims()!.nonce).toBe(odd);

    for (const nonce of ['', 'n'.repeat(513)]) {
      const { url } = await begin(config, c.app.redirectUri, { nonce });
      const res = await fetch(url, { redirect: 'manual' });
      await expectStatus(res, 302);
      const back = new URL(res.headers.get('location')!);
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('error_description')).toContain('nonce');
    }

    // The relying party that expected another nonce refuses the ID token (the token is bound to it).
    const other = await signedIn();
    const wrong = await redeem(config, other.callback, { ...other.started, nonce: oidc.randomNonce() }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(wrong?.cause).toBeInstanceOf(Error);
    expect(String((wrong?.cause as Error | undefined)?.message)).toBe(
      'unexpected ID Token "nonce" claim value',
    );
  });

  test('oidcc-codereuse: a code is redeemed once; the second exchange is invalid_grant', async () => {
    const { started, callback } = await signedIn();
    await redeem(config, callback, started);
    expect(await refusal(redeem(config, callback, started))).toBe('invalid_grant');
  });

  test('oidcc-codereuse-30seconds: reused 30 s later, invalid_grant and the first tokens revoked', async () => {
    const { started, callback } = await signedIn();
    const tokens = await redeem(config, callback, started);
    await oidc.fetchUserInfo(config, tokens.access_token, who.personId);
    c.clock.advance(30_000);
    const later = await c.rp(client);
    expect(await refusal(redeem(later, callback, started))).toBe('invalid_grant');
    // RFC 6749 §4.1.2: the tokens the code gave are revoked.
    const res = await fetch(String(later.serverMetadata().userinfo_endpoint), {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(res, 401);
    expect(await refusal(oidc.refreshTokenGrant(later, tokens.refresh_token!))).toBe('invalid_grant');
  });

  test('oidcc-refresh-token: a refresh answers new tokens for the same person and client', async () => {
    const { started, callback } = await signedIn();
    const tokens = await redeem(config, callback, started);
    c.clock.advance(2000);
    const now = await c.rp(client);
    const refreshed = await oidc.refreshTokenGrant(now, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const claims = refreshed.claims();
    // OIDC Core §12.2: an ID token in a refresh answer has the first one's iss, sub and aud.
    expect(claims).toBeDefined();
    if (claims) {
      expect(claims.iss).toBe(c.s.url);
      expect(claims.sub).toBe(who.personId);
      expect(claims.aud).toEqual(tokens.claims()!.aud);
      // The sign-in it stands for is the same: its session, time and methods.
      expect(claims.auth_time).toBe(tokens.claims()!.auth_time);
      expect(claims.sid).toBe(tokens.claims()!.sid);
      expect(claims.amr).toEqual(tokens.claims()!.amr);
      expect(claims.nonce).toBeUndefined();
    }
    const info = await oidc.fetchUserInfo(now, refreshed.access_token, who.personId);
    expect(info.sub).toBe(who.personId);
    // Another client cannot use the refresh token.
    const other = await c.client({ client_name: 'Other App' });
    expect(await refusal(oidc.refreshTokenGrant(await c.rp(other), refreshed.refresh_token!))).toBe(
      'invalid_grant',
    );
  });

  test('oidcc-claims-essential: email asked for in the ID token (claims parameter) is in it', async () => {
    const claims = JSON.stringify({ id_token: { email: { essential: true }, email_verified: null } });
    const { started, callback } = await signedIn({ claims });
    const tokens = await redeem(config, callback, started);
    expect(tokens.claims()).toMatchObject({ sub: who.personId, email: who.email, email_verified: true });
    // Without the parameter the ID token carries no email (it is at userinfo).
    expect(first.tokens.claims()!.email).toBeUndefined();
  });
});
