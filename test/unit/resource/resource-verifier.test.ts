// The resource-server helper (identity-service/resource) against the real service: tokens from its token
// endpoint, checked by an API on loopback as a developer would write it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resourceApi } from '@identity-service-examples/resource-server';
import { base64url, calculateJwkThumbprint, decodeJwt, exportJWK, SignJWT } from 'jose';
import * as openid from 'openid-client';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  basic,
  exchange,
  type MadeClient,
  obtainCode,
  startAuthorizeService,
} from '../oauth2-authorize/fixture.ts';

const API = 'https://api.example/mcp';
let s: AuthorizeService;
let machine: MadeClient;
let api: ReturnType<typeof Bun.serve>;
let apiUrl: string;

/** A client_credentials token of a client, for `resource` when given. */
async function machineToken(client: MadeClient, form: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${s.url}/oauth2/tokens`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(client.client_id, client.client_secret!),
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read', ...form }).toString(),
  });
  const text = await res.clone().text();
  await expectStatus(res, 200);
  return JSON.parse(text).access_token;
}

const call = (token?: string, scheme = 'Bearer') =>
  fetch(`${apiUrl}/whoami`, { headers: token ? { authorization: `${scheme} ${token}` } : {} });

beforeAll(async () => {
  s = await startAuthorizeService();
  const clientBody = {
    grant_types: ['client_credentials'],
    redirect_uris: [],
    scopes: ['read', 'write'],
    resources: [API],
  };
  machine = await s.createClient(clientBody);
  // The runnable example of docs/guides/resource-server.md, as it runs.
  let handle: (request: Request) => Promise<Response> = async () => new Response('starting', { status: 503 });
  api = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => handle(request) });
  handle = resourceApi({
    issuer: s.url,
    orgId: s.org.id,
    resource: API,
    publicUrl: `http://127.0.0.1:${api.port}`,
  });
  apiUrl = `http://127.0.0.1:${api.port}`;
});
afterAll(async () => {
  api.stop(true);
  await s.stop();
});

describe('identity-service/resource', () => {
  test("takes a token issued for the API's resource", async () => {
    const res = await call(await machineToken(machine, { resource: API }));
    await expectStatus(res.clone(), 200);
    expect(await res.json()).toEqual({ client_id: machine.client_id, sub: machine.client_id, scope: 'read' });
  });

  test('serves the protected resource metadata (RFC 9728), naming the issuer', async () => {
    const res = await fetch(`${apiUrl}/.well-known/oauth-protected-resource`);
    await expectStatus(res.clone(), 200);
    expect(await res.json()).toMatchObject({
      resource: API,
      authorization_servers: [s.url],
      scopes_supported: ['read'],
    });
  });

  test('asks for a token without one, naming its metadata (RFC 9728 §5.1)', async () => {
    const res = await call();
    await expectStatus(res.clone(), 401);
    expect(res.headers.get('www-authenticate')).toContain('resource_metadata="http://127.0.0.1:');
  });

  test("refuses the organization's own audience: the token is not for this API", async () => {
    const res = await call(await machineToken(machine));
    await expectStatus(res.clone(), 401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect((await res.json()).error_description).toContain('aud');
  });

  test("refuses another organization's token for the same resource", async () => {
    const { organization, apiKey } = await s.service.ctx.orgs.create('Other');
    const other = await s.createClient(
      { grant_types: ['client_credentials'], redirect_uris: [], scopes: ['read'], resources: [API] },
      { orgId: organization.id, key: apiKey },
    );
    const res = await call(await machineToken(other, { resource: API }));
    await expectStatus(res.clone(), 401);
    expect((await res.json()).error_description).toContain('another organization');
  });

  test('answers 403 insufficient_scope for a scope not granted', async () => {
    const res = await call(await machineToken(machine, { resource: API, scope: 'write' }));
    await expectStatus(res.clone(), 403);
    expect(res.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });

  test('refuses an ID token, a tampered token, and a plain token presented as DPoP', async () => {
    const person = await s.createClient({ resources: [API] });
    const { code, verifier } = await obtainCode(s, person, { resource: API });
    const tokens = await exchange(s, person, code, verifier);
    expect(tokens.status, tokens.text).toBe(200);
    await expectStatus(await call(String(tokens.json.id_token)), 401);
    await expectStatus(await call(String(tokens.json.access_token)), 200);
    const good = await machineToken(machine, { resource: API });
    const [h, p] = good.split('.');
    await expectStatus(await call(`${h}.${p}.${'A'.repeat(86)}`), 401);
    const dpop = await call(good, 'DPoP');
    await expectStatus(dpop.clone(), 401);
    expect(dpop.headers.get('www-authenticate')).toStartWith('DPoP');
  });

  test('takes a DPoP-bound token with a proof by its key, and refuses it as Bearer, replayed or by another key', async () => {
    const config = await openid.discovery(
      new URL(s.url),
      machine.client_id,
      machine.client_secret,
      undefined,
      {
        execute: [openid.allowInsecureRequests],
      },
    );
    const keyPair = await openid.randomDPoPKeyPair('ES256');
    const dpop = openid.getDPoPHandle(config, keyPair);
    const tokens = await openid.clientCredentialsGrant(
      config,
      { scope: 'read', resource: API },
      { DPoP: dpop },
    );
    expect(tokens.token_type).toBe('dpop');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey), 'sha256');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });

    const url = new URL(`${apiUrl}/whoami`);
    const ok = await openid.fetchProtectedResource(
      config,
      tokens.access_token,
      url,
      'GET',
      undefined,
      undefined,
      {
        DPoP: dpop,
      },
    );
    await expectStatus(ok.clone(), 200);
    expect((await ok.json()).client_id).toBe(machine.client_id);

    const asBearer = await call(tokens.access_token);
    await expectStatus(asBearer.clone(), 401);
    expect(asBearer.headers.get('www-authenticate')).toStartWith('DPoP ');
    expect(asBearer.headers.get('www-authenticate')).toContain('error="invalid_dpop_proof"');

    // A proof made by the key's holder, sent twice.
    const proof = await new SignJWT({
      htm: 'GET',
      htu: url.href,
      jti: crypto.randomUUID(),
      ath: base64url.encode(
        new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(tokens.access_token))),
      ),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keyPair.publicKey) })
      .setIssuedAt()
      .sign(keyPair.privateKey);
    const first = await fetch(url, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: proof },
    });
    await expectStatus(first, 200);
    const replayed = await fetch(url, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: proof },
    });
    await expectStatus(replayed.clone(), 401);
    expect((await replayed.json()).error_description).toContain('replayed');

    const thief = openid.getDPoPHandle(config, await openid.randomDPoPKeyPair('ES256'));
    const refused = await openid
      .fetchProtectedResource(config, tokens.access_token, url, 'GET', undefined, undefined, { DPoP: thief })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(openid.WWWAuthenticateChallengeError);
    const challenge = refused as openid.WWWAuthenticateChallengeError;
    await expectStatus({ status: challenge.status, body: challenge.cause }, 401);
    expect(challenge.cause[0]?.parameters.error_description).toContain('cnf.jkt');
  });
});
