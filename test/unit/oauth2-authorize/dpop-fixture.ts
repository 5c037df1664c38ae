// What the DPoP tests of the device grant, token exchange and DPoP-bound clients share: keys and proofs
// made by hand, raw token requests with a DPoP header, openid-client's configuration, and the person's
// approval of a device code in a browser driven by HTTP.
import { expect } from 'bun:test';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type CryptoKey as JoseKey,
  type JWK,
  SignJWT,
} from 'jose';
import * as openid from 'openid-client';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, basic, type MadeClient } from './fixture.ts';
import { CookieJar, csrfOf, postPage } from './sessions/browser-jar.ts';

export const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
export const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

/** A DPoP key made by hand, with its thumbprint (a bound token's cnf.jkt). */
export async function dpopKey(alg = 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') };
}
export type DPoPKey = Awaited<ReturnType<typeof dpopKey>>;

/** A DPoP proof made by hand: by default a good one for POST /oauth2/tokens of `s`, now. */
export function proof(
  s: AuthorizeService,
  key: { alg: string; privateKey: JoseKey; jwk: JWK },
  claims: Record<string, unknown> = {},
  iat = Math.floor(Date.now() / 1000),
) {
  return new SignJWT({ htm: 'POST', htu: `${s.url}/oauth2/tokens`, jti: crypto.randomUUID(), ...claims })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk })
    .setIssuedAt(iat)
    .sign(key.privateKey);
}

/** A form POST to an OAuth endpoint (Basic, or client_id for a public client), with a DPoP header when given. */
export async function tokenRequest(
  s: AuthorizeService,
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
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers, body: body.toString() });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {}, headers: res.headers, text };
}

/** What introspection answers for a token, asked by `client`. */
export async function introspect(s: AuthorizeService, client: MadeClient, token: string) {
  const res = await tokenRequest(s, client, { token }, undefined, '/oauth2/tokens/introspect');
  await expectStatus(res, 200);
  return res.json as Record<string, unknown>;
}

/** openid-client's configuration of a client, found through discovery. */
export const configOf = (s: AuthorizeService, client: MadeClient) =>
  openid.discovery(
    new URL(s.url),
    client.client_id,
    client.client_secret,
    client.client_secret ? undefined : openid.None(),
    { execute: [openid.allowInsecureRequests] },
  );

/** A fresh DPoP key pair by openid-client, its handle for `config`, and its thumbprint. */
export async function dpopHandle(config: openid.Configuration) {
  const keyPair = await openid.randomDPoPKeyPair('ES256');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
  return { keyPair, jkt, handle: openid.getDPoPHandle(config, keyPair) };
}

/** The person enters the user code in a fresh browser, signs in, and allows the device. */
export async function approveDevice(
  s: AuthorizeService,
  userCode: string,
  person: { handle: { value: string }; password: string },
) {
  const jar = new CookieJar();
  let res = await postPage(jar, s, '/oauth2/device', { user_code: userCode });
  if (res.status === 200)
    res = await postPage(jar, s, '/oauth2/authorize/login', {
      csrf_token: await csrfOf(res),
      handle: person.handle.value,
      password: person.password,
    });
  await expectStatus(res.clone(), 303);
  const approval = await jar.fetch(new URL(res.headers.get('location')!));
  await expectStatus(approval.clone(), 200);
  const decided = await postPage(jar, s, '/oauth2/device/approve', {
    csrf_token: await csrfOf(approval),
    decision: 'allow',
  });
  await expectStatus(decided, 200);
}

/** The refusal a promise ends in (it must end in one). */
export async function refusalOf(p: Promise<unknown>): Promise<openid.ResponseBodyError> {
  const e = await p.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(e).toBeInstanceOf(openid.ResponseBodyError);
  return e as openid.ResponseBodyError;
}
