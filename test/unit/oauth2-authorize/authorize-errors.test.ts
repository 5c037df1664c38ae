import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, type MadeClient, REDIRECT, startAuthorizeService } from './fixture.ts';

let s: AuthorizeService;
let confidential: MadeClient;
let publicClient: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  confidential = await s.createClient();
  publicClient = await s.createClient({ public: true });
});
afterAll(() => s.stop());

const challenge = () => oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier());

/** GET /oauth2/authorize with these parameters (a query string, so a parameter may repeat). */
async function authorize(query: string | Record<string, string>) {
  const qs = typeof query === 'string' ? query : new URLSearchParams(query).toString();
  const res = await fetch(`${s.url}/oauth2/authorize?${qs}`, { redirect: 'manual' });
  return { res, text: await res.text() };
}

const valid = async (client = confidential) => ({
  client_id: client.client_id,
  redirect_uri: REDIRECT,
  response_type: 'code',
  scope: 'openid read',
  state: 'st-1',
  code_challenge: await challenge(),
  code_challenge_method: 'S256',
});

describe('GET /oauth2/authorize before the redirect URI is trusted: an HTML page, never a redirect', () => {
  const cases: [string, () => Promise<string>, RegExp][] = [
    ['no client_id', async () => `redirect_uri=${encodeURIComponent(REDIRECT)}`, /client_id is required/],
    [
      'an unknown client_id',
      async () => new URLSearchParams({ ...(await valid()), client_id: 'nope' }).toString(),
      /client_id names no client/,
    ],
    [
      'a repeated client_id',
      async () => `${new URLSearchParams(await valid()).toString()}&client_id=${confidential.client_id}`,
      /client_id must be given once/,
    ],
    [
      'a redirect_uri not registered',
      async () =>
        new URLSearchParams({ ...(await valid()), redirect_uri: 'https://evil.example/cb' }).toString(),
      /redirect_uri must be exactly one of the client&#39;s registered/,
    ],
    [
      'a redirect_uri that differs only by a trailing slash',
      async () => new URLSearchParams({ ...(await valid()), redirect_uri: `${REDIRECT}/` }).toString(),
      /redirect_uri must be exactly one/,
    ],
    [
      'no redirect_uri',
      async () => `client_id=${confidential.client_id}&response_type=code&scope=read`,
      /redirect_uri is required/,
    ],
    [
      // RFC 9126 §4: a request_uri stands for a pushed request; one of none is never redirected.
      'a request_uri that names no pushed request (OIDC Core 6.2, RFC 9126)',
      async () =>
        new URLSearchParams({
          ...(await valid()),
          request_uri: 'urn:ietf:params:oauth:request_uri:abc',
        }).toString(),
      /invalid_request_uri: request_uri names no pushed authorization request/,
    ],
  ];
  it.each(cases)('answers 400 for %s', async (_, query, message) => {
    const { res, text } = await authorize(await query());
    await expectStatus({ status: res.status, text }, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(text).toMatch(message);
  });
});

describe('GET /oauth2/authorize after that: the error redirected to the client (RFC 6749 4.1.2.1)', () => {
  const cases: [string, (q: Record<string, string>) => Record<string, string> | string, string, RegExp][] = [
    [
      'response_type token',
      (q) => ({ ...q, response_type: 'token' }),
      'unsupported_response_type',
      /must be code/,
    ],
    ['no response_type', ({ response_type: _, ...q }) => q, 'invalid_request', /response_type is required/],
    [
      'a scope beyond the client',
      (q) => ({ ...q, scope: 'openid admin' }),
      'invalid_scope',
      /admin is beyond/,
    ],
    ['no scope', ({ scope: _, ...q }) => q, 'invalid_request', /scope is required/],
    [
      'PKCE plain',
      (q) => ({ ...q, code_challenge_method: 'plain' }),
      'invalid_request',
      /S256; plain is refused/,
    ],
    [
      'a challenge without a method',
      ({ code_challenge_method: _, ...q }) => q,
      'invalid_request',
      /S256; plain is refused/,
    ],
    ['a malformed challenge', (q) => ({ ...q, code_challenge: 'short' }), 'invalid_request', /43 base64url/],
    [
      'a repeated parameter',
      (q) => `${new URLSearchParams(q).toString()}&scope=read`,
      'invalid_request',
      /scope must be given once/,
    ],
    [
      'response_mode fragment',
      (q) => ({ ...q, response_mode: 'fragment' }),
      'invalid_request',
      /response_mode must be query/,
    ],
    // prompt=none without a session (login_required) is the sessions' answer: sessions/single-sign-on.test.ts.
    [
      'prompt=none with login',
      (q) => ({ ...q, prompt: 'none login' }),
      'invalid_request',
      /may not be combined/,
    ],
    [
      'a request object (OIDC Core 6.1)',
      (q) => ({ ...q, request: 'eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9.' }),
      'request_not_supported',
      /request \(a request object\) is not supported/,
    ],
  ];
  it.each(cases)('redirects %s with its error, the state and iss', async (_, change, error, description) => {
    const { res, text } = await authorize(change(await valid()));
    await expectStatus({ status: res.status, text }, 302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('error_description')).toMatch(description);
    expect(location.searchParams.get('state')).toBe('st-1');
    expect(location.searchParams.get('iss')).toBe(s.url);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('redirects a public client without a code_challenge with invalid_request', async () => {
    const { code_challenge: _, code_challenge_method: __, ...q } = await valid(publicClient);
    const { res } = await authorize(q);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/public client must use PKCE/);
  });

  it('accepts a confidential client without PKCE', async () => {
    const { code_challenge: _, code_challenge_method: __, ...q } = await valid();
    const { res, text } = await authorize(q);
    await expectStatus({ status: res.status, text }, 200);
  });

  it('redirects a client without the authorization_code grant with unauthorized_client', async () => {
    const machine = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [REDIRECT] });
    const { res } = await authorize(await valid(machine));
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('unauthorized_client');
  });

  it("omits state when the request had none, keeping the redirect URI's own query", async () => {
    const withQuery = 'http://127.0.0.1:9/callback?app=1';
    const client = await s.createClient({ redirect_uris: [withQuery] });
    const { state: _, ...q } = { ...(await valid(client)), redirect_uri: withQuery, response_type: 'token' };
    const { res } = await authorize(q);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('app')).toBe('1');
    expect(location.searchParams.has('state')).toBe(false);
  });
});

describe('the login page', () => {
  it('is a strict page: a hashed inline style only, no script, not framable, not cached', async () => {
    const { res, text } = await authorize(await valid());
    await expectStatus({ status: res.status, text }, 200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/]+=*'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`form-action 'self' http://127.0.0.1:9`);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(text).not.toContain('<script');
    expect(text).not.toMatch(/(src|href)="https?:/);
    expect(res.headers.get('set-cookie')).toMatch(
      /^oauth2_browser=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax/,
    );
  });

  it('escapes what the request puts in the page', async () => {
    const { res, text } = await authorize({ ...(await valid()), login_hint: '"><script>alert(1)</script>' });
    await expectStatus({ status: res.status, text }, 200);
    expect(text).not.toContain('<script>');
    expect(text).toContain('&quot;&gt;&lt;script&gt;');
  });

  it('limits how many sign-ins one address starts', async () => {
    const limited = await startAuthorizeService({ env: { OAUTH2_AUTHORIZE_RATE_LIMIT: '1/2' } });
    try {
      const client = await limited.createClient();
      const q = new URLSearchParams(await valid(client)).toString();
      const get = () => fetch(`${limited.url}/oauth2/authorize?${q}`, { redirect: 'manual' });
      await expectStatus(await get(), 200);
      await expectStatus(await get(), 200);
      const third = await get();
      await expectStatus(third, 429);
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.stop();
    }
  });
});
