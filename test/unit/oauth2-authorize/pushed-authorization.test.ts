import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { calculateJwkThumbprint, decodeJwt, exportJWK } from 'jose';
import * as openid from 'openid-client';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  expectOAuthError,
  loginByHttp,
  type MadeClient,
  postForm,
  REDIRECT,
  startAuthorizeService,
} from './fixture.ts';

/**
 * Pushed Authorization Requests (RFC 9126) driven by openid-client: the request pushed to POST
 * /oauth2/par, the browser sent with client_id and request_uri only, and what a hostile client, a
 * replay or a late browser gets. The clock is the service's own, moved by hand for the expiry.
 */
const clock = manualClock(Date.now());
let s: AuthorizeService;
let confidential: MadeClient;
let publicClient: MadeClient;
let required: MadeClient;
/** Another organization's caller, to make a client of its own. */
let hostile: CallOptions;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  confidential = await s.createClient();
  publicClient = await s.createClient({ public: true });
  required = await s.createClient({ require_pushed_authorization_requests: true });
  const other = await s.service.ctx.orgs.create('Other');
  hostile = { orgId: other.organization.id, key: other.apiKey };
});
afterAll(() => s.stop());

const configOf = (client: MadeClient) =>
  openid.discovery(
    new URL(s.url),
    client.client_id,
    client.client_secret,
    client.client_secret ? undefined : openid.None(),
    { execute: [openid.allowInsecureRequests] },
  );

/** A fresh authorization request's parameters, with PKCE. */
async function request(extra: Record<string, string> = {}) {
  const verifier = openid.randomPKCECodeVerifier();
  const state = openid.randomState();
  const params: Record<string, string> = {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state,
    code_challenge: await openid.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  };
  return { params, verifier, state };
}

/** Pushes a request by hand: the raw answer of POST /oauth2/par. */
async function push(client: MadeClient, extra: Record<string, string> = {}) {
  const { params, verifier, state } = await request(extra);
  const res = await postForm(s, '/oauth2/par', client, { response_type: 'code', ...params });
  return { res, verifier, state };
}

/** The authorization endpoint's answer to client_id and request_uri, as a browser gets it. */
const open = (clientId: string, requestUri: string, extra: Record<string, string> = {}) =>
  fetch(
    `${s.url}/oauth2/authorize?${new URLSearchParams({ client_id: clientId, request_uri: requestUri, ...extra })}`,
    { redirect: 'manual' },
  );

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as openid.ResponseBodyError;
  }
  throw new Error('expected a refusal');
};

describe('a pushed authorization request with openid-client', () => {
  it('pushes, signs in with only client_id and request_uri, and exchanges the code', async () => {
    const config = await configOf(confidential);
    expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${s.url}/oauth2/par`);
    const { params, verifier, state } = await request({ nonce: openid.randomNonce() });
    const url = await openid.buildAuthorizationUrlWithPAR(config, params);
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:[\w-]{43}$/);
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const tokens = await openid.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: params.nonce,
    });
    expect(tokens.claims()?.sub).toBe(person.personId);
    expect(decodeJwt(tokens.access_token).scope).toBe('openid email');
  });

  it('answers 201 with a request_uri of 256 random bits and expires_in 60, never cached', async () => {
    const { res } = await push(confidential);
    await expectStatus(res, 201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.json.expires_in).toBe(60);
    expect(String(res.json.request_uri)).toMatch(/^urn:ietf:params:oauth:request_uri:[\w-]{43}$/);
  });

  it('takes a public client by client_id, with PKCE', async () => {
    const config = await configOf(publicClient);
    const { params, verifier, state } = await request();
    const url = await openid.buildAuthorizationUrlWithPAR(config, params);
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const tokens = await openid.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
    });
    expect(tokens.token_type).toBe('bearer');
  });

  it('uses the pushed parameters only: a scope added to the URL is ignored', async () => {
    const { res } = await push(confidential);
    await expectStatus(res, 201);
    const page = await open(confidential.client_id, String(res.json.request_uri), {
      scope: 'openid write',
      redirect_uri: 'https://evil.example/cb',
    });
    await expectStatus(page, 200);
  });
});

describe('a pushed request refused at POST /oauth2/par (RFC 9126 §2.3, as JSON)', () => {
  it('refuses a redirect_uri that is not the client’s, with invalid_request and no redirect', async () => {
    const { res } = await push(confidential, { redirect_uri: 'https://evil.example/cb' });
    await expectOAuthError(res, 400, 'invalid_request', /redirect_uri must be exactly one/);
  });

  it('refuses a public client without PKCE', async () => {
    const res = await postForm(s, '/oauth2/par', publicClient, {
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
    });
    await expectOAuthError(res, 400, 'invalid_request', /public client must use PKCE/);
  });

  it('refuses request_uri inside the pushed body', async () => {
    const { res } = await push(confidential, { request_uri: 'urn:ietf:params:oauth:request_uri:abc' });
    await expectOAuthError(res, 400, 'invalid_request', /request_uri must not be pushed/);
  });

  it('refuses a scope beyond the client’s and another response_type through openid-client', async () => {
    const config = await configOf(confidential);
    const beyond = await refusal(
      openid.buildAuthorizationUrlWithPAR(config, { ...(await request()).params, scope: 'openid admin' }),
    );
    expect(beyond).toBeInstanceOf(openid.ResponseBodyError);
    expect(beyond.error).toBe('invalid_scope');
    const token = await refusal(
      openid.buildAuthorizationUrlWithPAR(config, { ...(await request()).params, response_type: 'token' }),
    );
    expect(token.error).toBe('unsupported_response_type');
  });

  it('refuses a wrong secret with 401 invalid_client', async () => {
    const res = await postForm(
      s,
      '/oauth2/par',
      { ...confidential, client_secret: 'wrong' },
      {
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
      },
    );
    await expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toStartWith('Basic');
  });

  it('refuses a client that may not use the authorization_code grant', async () => {
    const machine = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [REDIRECT] });
    const { res } = await push(machine);
    await expectOAuthError(res, 400, 'unauthorized_client', /authorization_code grant/);
  });
});

describe('a request_uri presented at the authorization endpoint', () => {
  it('is good once: the second use is an invalid_request_uri page, not a redirect', async () => {
    const { res } = await push(confidential);
    const requestUri = String(res.json.request_uri);
    await expectStatus(await open(confidential.client_id, requestUri), 200);
    const again = await open(confidential.client_id, requestUri);
    await expectStatus(again, 400);
    expect(again.headers.get('location')).toBeNull();
    expect(await again.text()).toContain('invalid_request_uri: request_uri has been used already');
  });

  it('gives exactly one of many concurrent redemptions the login', async () => {
    const { res } = await push(confidential);
    const requestUri = String(res.json.request_uri);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => open(confidential.client_id, requestUri)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
  });

  it("is another client's: invalid_request_uri for the other client, and still good for its own", async () => {
    const { res } = await push(confidential);
    const requestUri = String(res.json.request_uri);
    const other = await open(publicClient.client_id, requestUri);
    await expectStatus(other, 400);
    expect(other.headers.get('location')).toBeNull();
    expect(await other.text()).toContain('invalid_request_uri');
    await expectStatus(await open(confidential.client_id, requestUri), 200);
  });

  it("is another organization's client's: refused the same way", async () => {
    const theirs = await s.createClient({}, hostile);
    const { res } = await push(theirs);
    await expectStatus(res, 201);
    const requestUri = String(res.json.request_uri);
    const mine = await open(confidential.client_id, requestUri);
    await expectStatus(mine, 400);
    expect(await mine.text()).toContain('invalid_request_uri');
    // Their own still works: nothing was burnt by the attempt.
    await expectStatus(await open(theirs.client_id, requestUri), 200);
  });

  it('is unknown, or made up: invalid_request_uri without a redirect', async () => {
    for (const uri of ['urn:ietf:params:oauth:request_uri:nothing', 'https://evil.example/request.jwt']) {
      const page = await open(confidential.client_id, uri, { redirect_uri: REDIRECT, state: 's' });
      await expectStatus(page, 400);
      expect(page.headers.get('location')).toBeNull();
      expect(await page.text()).toContain('invalid_request_uri');
    }
  });
});

describe('require_pushed_authorization_requests (RFC 9126 §6)', () => {
  it('is false by default, set on create, answered in the client JSON, and changed by PATCH', async () => {
    expect(confidential).toMatchObject({ require_pushed_authorization_requests: false });
    expect(required).toMatchObject({ require_pushed_authorization_requests: true });
    const patched = await s.call('PATCH', `/oauth2/clients/${confidential.client_id}`, {
      body: { require_pushed_authorization_requests: true },
    });
    await expectStatus(patched, 200);
    expect(patched.json.result.require_pushed_authorization_requests).toBe(true);
    const back = await s.call('PATCH', `/oauth2/clients/${confidential.client_id}`, {
      body: { require_pushed_authorization_requests: false },
    });
    expect(back.json.result.require_pushed_authorization_requests).toBe(false);
    const wrong = await s.call('PATCH', `/oauth2/clients/${confidential.client_id}`, {
      body: { require_pushed_authorization_requests: 'yes' },
    });
    await expectStatus(wrong, 400);
  });

  it('refuses a plain authorization request of such a client with invalid_request', async () => {
    const { params, state } = await request();
    const url = `${s.url}/oauth2/authorize?${new URLSearchParams({ client_id: required.client_id, response_type: 'code', ...params })}`;
    const res = await fetch(url, { redirect: 'manual' });
    await expectStatus(res, 302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/must push its authorization requests/);
    expect(location.searchParams.get('state')).toBe(state);
  });

  it('takes its pushed request', async () => {
    const { res } = await push(required);
    await expectStatus(res, 201);
    await expectStatus(await open(required.client_id, String(res.json.request_uri)), 200);
  });

  it('is announced deployment-wide as false, with the endpoint, in both metadata documents', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const doc = await (await fetch(`${s.url}${path}`)).json();
      expect(doc).toMatchObject({
        pushed_authorization_request_endpoint: `${s.url}/oauth2/par`,
        require_pushed_authorization_requests: false,
      });
    }
  });
});

describe('a DPoP-bound pushed request (RFC 9449 §10)', () => {
  it('binds the code to the key of the proof on the push: another key’s exchange is refused', async () => {
    const config = await configOf(publicClient);
    const key = await openid.randomDPoPKeyPair('ES256');
    const dpop = openid.getDPoPHandle(config, key);
    const { params, verifier, state } = await request();
    const url = await openid.buildAuthorizationUrlWithPAR(config, params, { DPoP: dpop });
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const thief = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'));
    const refused = await refusal(
      openid.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: verifier, expectedState: state },
        undefined,
        { DPoP: thief },
      ),
    );
    expect(refused.error).toBe('invalid_grant');
    expect(refused.error_description).toMatch(/not the one the authorization request bound/);
  });

  it('binds with dpop_jkt alone, and the exchange by that key succeeds with cnf.jkt', async () => {
    const config = await configOf(publicClient);
    const key = await openid.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');
    const { params, verifier, state } = await request({ dpop_jkt: jkt });
    const url = await openid.buildAuthorizationUrlWithPAR(config, params);
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const tokens = await openid.authorizationCodeGrant(
      config,
      callback,
      { pkceCodeVerifier: verifier, expectedState: state },
      undefined,
      { DPoP: openid.getDPoPHandle(config, key) },
    );
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
  });

  it('refuses the exchange of a bound code without any proof', async () => {
    const config = await configOf(publicClient);
    const key = await openid.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');
    const { params, verifier } = await request({ dpop_jkt: jkt });
    const url = await openid.buildAuthorizationUrlWithPAR(config, params);
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const res = await postForm(s, '/oauth2/tokens', publicClient, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    await expectOAuthError(res, 400, 'invalid_grant', /DPoP proof is required/);
  });

  it('refuses dpop_jkt naming another key than the proof on the push', async () => {
    const config = await configOf(publicClient);
    const other = await openid.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(other.publicKey), 'sha256');
    const dpop = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'));
    const refused = await refusal(
      openid.buildAuthorizationUrlWithPAR(config, (await request({ dpop_jkt: jkt })).params, { DPoP: dpop }),
    );
    expect(refused.error).toBe('invalid_dpop_proof');
  });
});

describe('dpop_jkt on a plain authorization request (RFC 9449 §10)', () => {
  it('binds the code too: another key is refused, a malformed thumbprint redirects invalid_request', async () => {
    const config = await configOf(publicClient);
    const key = await openid.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(key.publicKey), 'sha256');
    const { params, verifier, state } = await request({ dpop_jkt: jkt });
    const url = openid.buildAuthorizationUrl(config, params);
    const person = await s.person();
    const callback = await loginByHttp(s, url, person.handle.value, person.password);
    const thief = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'));
    const refused = await refusal(
      openid.authorizationCodeGrant(
        config,
        callback,
        { pkceCodeVerifier: verifier, expectedState: state },
        undefined,
        { DPoP: thief },
      ),
    );
    expect(refused.error).toBe('invalid_grant');

    const bad = openid.buildAuthorizationUrl(config, (await request({ dpop_jkt: 'short' })).params);
    const res = await fetch(bad, { redirect: 'manual' });
    await expectStatus(res, 302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/dpop_jkt must be/);
    const pushed = await push(publicClient, { dpop_jkt: 'short' });
    await expectOAuthError(pushed.res, 400, 'invalid_request', /dpop_jkt must be/);
  });
});

// Last: the clock moves on past the request's lifetime (proofs and tokens made later would be off).
describe('an expired request_uri', () => {
  it('is an invalid_request_uri page once its 60 seconds have passed', async () => {
    const { res } = await push(confidential);
    const requestUri = String(res.json.request_uri);
    clock.advance(61_000);
    const late = await open(confidential.client_id, requestUri);
    await expectStatus(late, 400);
    expect(late.headers.get('location')).toBeNull();
    expect(await late.text()).toContain('invalid_request_uri: request_uri has expired');
  });
});
