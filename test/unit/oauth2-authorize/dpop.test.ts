import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { lt } from 'drizzle-orm';
import {
  calculateJwkThumbprint,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  type CryptoKey as JoseKey,
  type JWK,
  SignJWT,
} from 'jose';
import * as openid from 'openid-client';
import { oauth2DpopProofs } from '../../../plugins/oauth2/schema.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  basic,
  expectOAuthError,
  loginByHttp,
  type MadeClient,
  REDIRECT,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
let publicClient: MadeClient;
let confidential: MadeClient;
let machine: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  publicClient = await s.createClient({ public: true });
  confidential = await s.createClient();
  machine = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
});
afterAll(() => s.stop());

/** A DPoP key of the client's, made by hand. */
async function dpopKey(alg = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
type Key = Awaited<ReturnType<typeof dpopKey>>;

/** A DPoP proof made by hand: by default a good one for POST /oauth2/tokens now. */
function proof(
  key: { alg: string; privateKey: JoseKey; jwk: JWK },
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  iat = Math.floor(Date.now() / 1000),
) {
  return new SignJWT({ htm: 'POST', htu: `${s.url}/oauth2/tokens`, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...header })
    .setIssuedAt(iat)
    .sign(key.privateKey);
}

/** A form POST to the token endpoint with a DPoP header when given. */
async function tokenRequest(
  base: string,
  client: MadeClient,
  form: Record<string, string>,
  dpop?: string,
  path = '/oauth2/tokens',
) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (client.client_secret) headers.authorization = basic(client.client_id, client.client_secret);
  else body.set('client_id', client.client_id);
  if (dpop !== undefined) headers.dpop = dpop;
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: body.toString() });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {}, headers: res.headers, text };
}

const clientCredentials = (dpop?: string) =>
  tokenRequest(s.url, machine, { grant_type: 'client_credentials' }, dpop);

/** openid-client's configuration for a client of the service. */
const configOf = (client: MadeClient, base = s.url) =>
  openid.discovery(
    new URL(base),
    client.client_id,
    client.client_secret,
    client.client_secret ? undefined : openid.None(),
    { execute: [openid.allowInsecureRequests] },
  );

/** A code flow through the hosted login, its tokens asked for by openid-client with the DPoP handle. */
async function signInWithDPoP(client: MadeClient, dpop: openid.DPoPHandle | undefined) {
  const config = await configOf(client);
  const verifier = openid.randomPKCECodeVerifier();
  const state = openid.randomState();
  const url = openid.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    state,
    code_challenge: await openid.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const person = await s.person();
  const callback = await loginByHttp(s, url, person.handle.value, person.password);
  const tokens = await openid.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state },
    undefined,
    dpop ? { DPoP: dpop } : {},
  );
  return { config, tokens, person };
}

const oauthErrorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a refusal');
};

describe('DPoP with openid-client', () => {
  it('binds a public client’s tokens to its key: token_type DPoP, cnf.jkt, userinfo and refresh by the key', async () => {
    const keyPair = await openid.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
    const dpop = openid.getDPoPHandle(await configOf(publicClient), keyPair);
    const { config, tokens, person } = await signInWithDPoP(publicClient, dpop);
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });

    const info = await openid.fetchUserInfo(config, tokens.access_token, person.personId, { DPoP: dpop });
    expect(info.sub).toBe(person.personId);

    const refreshed = await openid.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP: dpop,
    });
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });

    // Another key: refused, and the refresh token stays good for its holder.
    const thief = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'));
    const stolen = await oauthErrorOf(
      openid.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: thief }),
    );
    expect(stolen).toBeInstanceOf(openid.ResponseBodyError);
    expect((stolen as openid.ResponseBodyError).error).toBe('invalid_dpop_proof');
    const noProof = await tokenRequest(s.url, publicClient, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.refresh_token!,
    });
    await expectOAuthError(noProof, 400, 'invalid_dpop_proof', /bound to a DPoP key/);
    const again = await openid.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: dpop });
    expect(again.token_type).toBe('dpop');
  });

  it('leaves a confidential client’s refresh token unbound, its access tokens bound (RFC 9449 §5)', async () => {
    const dpop = openid.getDPoPHandle(await configOf(confidential), await openid.randomDPoPKeyPair());
    const { tokens } = await signInWithDPoP(confidential, dpop);
    expect(tokens.token_type).toBe('dpop');
    const plain = await tokenRequest(s.url, confidential, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    await expectStatus(plain, 200);
    expect(plain.json.token_type).toBe('bearer');
    expect(decodeJwt(String(plain.json.access_token)).cnf).toBeUndefined();
  });

  it('binds a client_credentials token, and introspection answers its cnf and token_type DPoP', async () => {
    const config = await configOf(machine);
    const keyPair = await openid.randomDPoPKeyPair('EdDSA');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
    const tokens = await openid.clientCredentialsGrant(config, undefined, {
      DPoP: openid.getDPoPHandle(config, keyPair),
    });
    expect(tokens.token_type).toBe('dpop');
    const seen = await tokenRequest(
      s.url,
      confidential,
      { token: tokens.access_token },
      undefined,
      '/oauth2/tokens/introspect',
    );
    await expectStatus(seen, 200);
    expect(seen.json).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });
  });

  it('refuses a bound token presented as Bearer at userinfo, and a proof without ath', async () => {
    const keyPair = await openid.randomDPoPKeyPair('ES256');
    const { tokens } = await signInWithDPoP(
      publicClient,
      openid.getDPoPHandle(await configOf(publicClient), keyPair),
    );
    const asBearer = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(asBearer, 401);
    expect(asBearer.headers.get('www-authenticate')).toStartWith('DPoP error="invalid_token"');

    const key = { alg: 'ES256', privateKey: keyPair.privateKey, jwk: await exportJWK(keyPair.publicKey) };
    const htu = `${s.url}/oauth2/userinfo`;
    const noAth = await fetch(htu, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await proof(key, { htm: 'GET', htu }) },
    });
    await expectStatus(noAth, 401);
    expect(noAth.headers.get('www-authenticate')).toStartWith('DPoP error="invalid_dpop_proof"');
  });

  it('takes an unbound token as Bearer only, and a bearer-only client is unchanged', async () => {
    const { tokens, person } = await signInWithDPoP(publicClient, undefined);
    expect(tokens.token_type).toBe('bearer');
    const ok = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(ok, 200);
    expect((await ok.json()).sub).toBe(person.personId);
    const asDpop = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `DPoP ${tokens.access_token}` },
    });
    await expectStatus(asDpop, 401);
  });
});

describe('DPoP proofs made by hand at the token endpoint', () => {
  let key: Key;
  beforeAll(async () => {
    key = await dpopKey();
  });

  it('binds the token to a good proof’s key (RS256 and PS256 too)', async () => {
    for (const alg of ['ES256', 'RS256', 'PS256']) {
      const k = alg === 'ES256' ? key : await dpopKey(alg);
      const res = await clientCredentials(await proof(k));
      await expectStatus(res, 200);
      expect(res.json.token_type).toBe('DPoP');
      expect(decodeJwt(String(res.json.access_token)).cnf).toEqual({ jkt: k.jkt });
    }
  });

  it('refuses a proof for another URL, with a query, or for another method', async () => {
    await expectOAuthError(
      await clientCredentials(await proof(key, { htu: `${s.url}/oauth2/tokens/introspect` })),
      400,
      'invalid_dpop_proof',
      /another URL \(htu/,
    );
    await expectOAuthError(
      await clientCredentials(await proof(key, { htu: 'https://elsewhere.example/oauth2/tokens' })),
      400,
      'invalid_dpop_proof',
      /htu/,
    );
    await expectOAuthError(
      await clientCredentials(await proof(key, { htm: 'GET' })),
      400,
      'invalid_dpop_proof',
      /method GET, not POST/,
    );
  });

  it('refuses a replayed proof (its jti taken once)', async () => {
    const once = await proof(key);
    await expectStatus(await clientCredentials(once), 200);
    await expectOAuthError(await clientCredentials(once), 400, 'invalid_dpop_proof', /replayed/);
  });

  it('refuses a proof whose iat is old or in the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const iat of [now - 300, now + 300])
      await expectOAuthError(
        await clientCredentials(await proof(key, {}, {}, iat)),
        400,
        'invalid_dpop_proof',
        /iat must be within 60 seconds/,
      );
  });

  it('refuses a proof of another typ, one signed by another key, one with a private key, two proofs', async () => {
    await expectOAuthError(
      await clientCredentials(await proof(key, {}, { typ: 'JWT' })),
      400,
      'invalid_dpop_proof',
    );
    const other = await dpopKey();
    await expectOAuthError(
      await clientCredentials(await proof({ ...other, jwk: key.jwk })),
      400,
      'invalid_dpop_proof',
    );
    const withPrivate = { ...key, jwk: await exportJWK(key.privateKey) };
    await expectOAuthError(await clientCredentials(await proof(withPrivate)), 400, 'invalid_dpop_proof');
    await expectOAuthError(
      await clientCredentials(`${await proof(key)}, ${await proof(key)}`),
      400,
      'invalid_dpop_proof',
      /exactly one DPoP proof/,
    );
    await expectOAuthError(await clientCredentials('not-a-jwt'), 400, 'invalid_dpop_proof');
  });

  it('lists the proof algorithms in both discovery documents', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const res = await fetch(`${s.url}${path}`);
      await expectStatus(res, 200);
      expect((await res.clone().json()).dpop_signing_alg_values_supported).toContain('ES256');
    }
  });
});

describe('DPoP server nonces (OAUTH2_DPOP_NONCE=true)', () => {
  const clock = manualClock(Date.now());
  let n: AuthorizeService;
  let client: MadeClient;
  let key: Key;
  beforeAll(async () => {
    n = await startAuthorizeService({ env: { OAUTH2_DPOP_NONCE: 'true' }, clock });
    client = await n.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
    key = await dpopKey();
  });
  afterAll(() => n.stop());

  const at = (nonce?: string) =>
    proof(
      key,
      { htu: `${n.url}/oauth2/tokens`, ...(nonce ? { nonce } : {}) },
      {},
      Math.floor(clock.now() / 1000),
    );
  const grant = (dpop: string) => tokenRequest(n.url, client, { grant_type: 'client_credentials' }, dpop);

  it('answers use_dpop_nonce with a DPoP-Nonce header, then takes a proof with that nonce', async () => {
    const first = await grant(await at());
    await expectOAuthError(first, 400, 'use_dpop_nonce', /nonce/);
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).toBeTruthy();
    const second = await grant(await at(nonce!));
    await expectStatus(second, 200);
    expect(second.json.token_type).toBe('DPoP');
    expect(second.headers.get('dpop-nonce')).toBeTruthy();
  });

  it('refuses a made-up nonce and one from two windows ago', async () => {
    await expectOAuthError(await grant(await at('made-up')), 400, 'use_dpop_nonce', /not a current one/);
    const nonce = (await grant(await at())).headers.get('dpop-nonce')!;
    clock.advance(11 * 60_000);
    const late = await grant(await at(nonce));
    await expectOAuthError(late, 400, 'use_dpop_nonce');
    expect(late.headers.get('dpop-nonce')).not.toBe(nonce);
  });

  it('lets openid-client retry with the nonce it is given', async () => {
    // openid-client's proofs carry its own clock's iat: bring the service's back to real time.
    clock.advance(Date.now() - clock.now());
    const config = await configOf(client, n.url);
    const dpop = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair());
    const tokens = await openid.clientCredentialsGrant(config, undefined, { DPoP: dpop });
    expect(tokens.token_type).toBe('dpop');
  });

  it('sweeps the proofs whose window has passed (the first test’s, 11 minutes ago)', async () => {
    const t = oauth2DpopProofs;
    const expired = () => n.service.ctx.storage.db.select().from(t).where(lt(t.expiresAt, clock.now()));
    const held = await n.service.ctx.storage.db.select().from(t);
    expect(held.length).toBeGreaterThan(0);
    // The sweep rides on the last grant's write, after its answer.
    const deadline = Date.now() + 5000;
    while ((await expired()).length > 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(await expired()).toEqual([]);
  });
});
