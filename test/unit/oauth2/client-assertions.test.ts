import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { basic, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const clock = manualClock(Date.now());
let t: OAuth2TestService;

interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}
async function keyPair(alg: 'ES256' | 'RS256' | 'PS256' | 'EdDSA', kid: string): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  // No alg in the JWK, as most published keys: the assertion's alg and kid choose.
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid } };
}

let keyA: KeyPair;
let keyB: KeyPair;
/** A private_key_jwt client with key A, another with key B, a client_secret_jwt one and a plain one. */
let pkj: { client_id: string };
let other: { client_id: string };
let csj: { client_id: string; client_secret?: string };
let plain: { client_id: string; client_secret?: string };

beforeAll(async () => {
  t = await startOAuth2Service({ clock });
  [keyA, keyB] = await Promise.all([keyPair('ES256', 'a'), keyPair('ES256', 'b')]);
  pkj = await t.createClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [keyA.jwk] } });
  other = await t.createClient({ token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [keyB.jwk] } });
  csj = await t.createClient({ token_endpoint_auth_method: 'client_secret_jwt' });
  plain = await t.createClient();
});
afterAll(() => t.stop());

/** openid-client v6 against the service's discovery document, over loopback http. */
const discover = (clientId: string, auth: oidc.ClientAuth) =>
  oidc.discovery(
    new URL(t.url),
    clientId,
    // The service's clock stands still between advances: openid-client's assertions are timed by it,
    // or a slow machine's seconds since the clock was set would put their iat and nbf in its future.
    { [oidc.clockSkew]: Math.round((clock.now() - Date.now()) / 1000) },
    auth,
    { execute: [oidc.allowInsecureRequests] },
  );

/** A hand-made assertion for `clientId`: claims given as undefined are left out. */
async function assertion(
  clientId: string,
  key: CryptoKey | Uint8Array,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = { alg: 'ES256', kid: 'a' },
): Promise<string> {
  const now = Math.floor(clock.now() / 1000);
  const payload = Object.fromEntries(
    Object.entries({
      iss: clientId,
      sub: clientId,
      aud: `${t.url}/oauth2/tokens`,
      iat: now,
      exp: now + 60,
      jti: crypto.randomUUID(),
      ...claims,
    }).filter(([, value]) => value !== undefined),
  );
  return new SignJWT(payload).setProtectedHeader(header as { alg: string }).sign(key);
}

const grant = (clientAssertion: string, extra: Record<string, string> = {}, headers = {}) =>
  t.post(
    '/oauth2/tokens',
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: JWT_BEARER,
      client_assertion: clientAssertion,
      ...extra,
    }),
    headers,
  );

/** Expects the OAuth refusal `error` whose description contains `says`. */
async function expectRefused(res: Response, status: number, error: string, says: string) {
  await expectStatus(res, status);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe(error);
  expect(body.error_description).toContain(says);
}

describe('private_key_jwt and client_secret_jwt, driven by openid-client', () => {
  it('discovers both methods and their algorithms', async () => {
    const config = await discover(pkj.client_id, oidc.PrivateKeyJwt(keyA.privateKey));
    const meta = config.serverMetadata();
    for (const member of [
      'token_endpoint_auth_methods_supported',
      'introspection_endpoint_auth_methods_supported',
      'revocation_endpoint_auth_methods_supported',
    ] as const)
      expect(meta[member]).toEqual(expect.arrayContaining(['private_key_jwt', 'client_secret_jwt']));
    expect(meta.token_endpoint_auth_signing_alg_values_supported).toEqual(
      expect.arrayContaining(['RS256', 'PS256', 'ES256', 'EdDSA', 'HS256']),
    );
    expect(meta.token_endpoint_auth_signing_alg_values_supported).not.toContain('none');
  });

  it('gets a token with PrivateKeyJwt, then introspects and revokes it with new assertions', async () => {
    const config = await discover(pkj.client_id, oidc.PrivateKeyJwt({ key: keyA.privateKey, kid: 'a' }));
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('read');
    const seen = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(seen.active).toBe(true);
    expect(seen.client_id).toBe(pkj.client_id);
    await oidc.tokenRevocation(config, tokens.access_token);
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('gets tokens with RSA, RSA-PSS and Ed25519 keys chosen by kid (Ed25519 as EdDSA or Ed25519)', async () => {
    const keys = await Promise.all([
      keyPair('RS256', 'rsa'),
      keyPair('PS256', 'pss'),
      keyPair('EdDSA', 'ed'),
    ]);
    const client = await t.createClient({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: keys.map((k) => k.jwk) },
    });
    for (const k of keys) {
      const config = await discover(
        client.client_id,
        oidc.PrivateKeyJwt({ key: k.privateKey, kid: k.jwk.kid! }),
      );
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'write' });
      expect(tokens.access_token).toBeString();
    }
  });

  it('gets a token with ClientSecretJwt, and after a new secret only with the new one', async () => {
    const config = await discover(csj.client_id, oidc.ClientSecretJwt(csj.client_secret!));
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeString();
    const renewed = await t.call('POST', `/oauth2/clients/${csj.client_id}/secret`);
    await expectStatus(renewed, 200);
    const fresh = renewed.json.result.client_secret as string;
    const stale = await assertion(
      csj.client_id,
      new TextEncoder().encode(csj.client_secret!),
      {},
      { alg: 'HS256' },
    );
    await expectRefused(await grant(stale), 401, 'invalid_client', 'signature does not verify');
    const renewedConfig = await discover(csj.client_id, oidc.ClientSecretJwt(fresh));
    expect((await oidc.clientCredentialsGrant(renewedConfig)).access_token).toBeString();
    csj.client_secret = fresh;
  });
});

describe('a client assertion is refused', () => {
  it('when its jti was used before, also with a different form around it', async () => {
    const once = await assertion(pkj.client_id, keyA.privateKey);
    await expectStatus(await grant(once), 200);
    await expectRefused(await grant(once), 401, 'invalid_client', 'used before');
    await expectRefused(await grant(once, { scope: 'read' }), 401, 'invalid_client', 'used before');
    // The same jti in a newly signed assertion is the same assertion again.
    const jti = crypto.randomUUID();
    await expectStatus(await grant(await assertion(pkj.client_id, keyA.privateKey, { jti })), 200);
    const again = await grant(await assertion(pkj.client_id, keyA.privateKey, { jti }));
    await expectRefused(again, 401, 'invalid_client', 'used before');
  });

  it('when aud names another server, and accepted when it names the issuer', async () => {
    for (const aud of [
      'https://elsewhere.example/oauth2/tokens',
      `${t.url}/other`,
      [`${t.url}/oauth2/token`],
    ]) {
      const res = await grant(await assertion(pkj.client_id, keyA.privateKey, { aud }));
      await expectRefused(res, 401, 'invalid_client', 'aud must name this server');
    }
    await expectRefused(
      await grant(await assertion(pkj.client_id, keyA.privateKey, { aud: undefined })),
      401,
      'invalid_client',
      'must carry aud',
    );
    for (const aud of [t.url, ['https://elsewhere.example', t.url]])
      await expectStatus(await grant(await assertion(pkj.client_id, keyA.privateKey, { aud })), 200);
  });

  it('when it has expired (past the small tolerance), lacks exp or expires too far ahead', async () => {
    const soon = await assertion(pkj.client_id, keyA.privateKey);
    clock.advance(71_000);
    await expectRefused(await grant(soon), 401, 'invalid_client', 'expired');
    const now = Math.floor(clock.now() / 1000);
    await expectRefused(
      await grant(await assertion(pkj.client_id, keyA.privateKey, { exp: undefined })),
      401,
      'invalid_client',
      'must carry exp',
    );
    await expectRefused(
      await grant(await assertion(pkj.client_id, keyA.privateKey, { exp: now + 3600 })),
      401,
      'invalid_client',
      'too far ahead',
    );
    await expectStatus(await grant(await assertion(pkj.client_id, keyA.privateKey, { exp: now + 300 })), 200);
  });

  it('without jti', async () => {
    const res = await grant(await assertion(pkj.client_id, keyA.privateKey, { jti: undefined }));
    await expectRefused(res, 401, 'invalid_client', 'must carry jti');
  });

  it('when iss is not sub, or sub is not the client_id in the form', async () => {
    const res = await grant(await assertion(pkj.client_id, keyA.privateKey, { iss: other.client_id }));
    await expectRefused(res, 401, 'invalid_client', `iss must be the client_id ${pkj.client_id}`);
    const lying = await grant(await assertion(pkj.client_id, keyA.privateKey), {
      client_id: other.client_id,
    });
    await expectRefused(
      lying,
      400,
      'invalid_request',
      "names another client than the client_assertion's sub",
    );
    await expectRefused(
      await grant(await assertion(pkj.client_id, keyA.privateKey, { sub: undefined })),
      401,
      'invalid_client',
      'must carry sub',
    );
  });

  it("when signed with another client's key, by its kid or by the victim's", async () => {
    // The attacker owns client `other` (key B) and signs as `pkj`.
    const byOwnKid = await assertion(pkj.client_id, keyB.privateKey, {}, { alg: 'ES256', kid: 'b' });
    await expectRefused(await grant(byOwnKid), 401, 'invalid_client', 'names no key');
    const byVictimKid = await assertion(pkj.client_id, keyB.privateKey, {}, { alg: 'ES256', kid: 'a' });
    await expectRefused(await grant(byVictimKid), 401, 'invalid_client', 'signature does not verify');
  });

  it("of another organization's client, which is the same as any unknown client", async () => {
    const hostile = await t.service.ctx.orgs.create('Hostile');
    const theirs = await t.createClient(
      { token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [keyB.jwk] } },
      { orgId: hostile.organization.id, key: hostile.apiKey },
    );
    // Their key cannot speak for our client, and their client's token is for their organization.
    const res = await grant(
      await assertion(theirs.client_id, keyB.privateKey, {}, { alg: 'ES256', kid: 'b' }),
    );
    await expectStatus(res, 200);
    const body = (await res.json()) as { access_token: string };
    const claims = JSON.parse(atob(body.access_token.split('.')[1]!.replace(/-/g, '+').replace(/_/g, '/')));
    expect(claims.oid).toBe(hostile.organization.id);
    const spoof = await assertion(pkj.client_id, keyB.privateKey, {}, { alg: 'ES256', kid: 'b' });
    await expectRefused(await grant(spoof), 401, 'invalid_client', 'names no key');
  });

  it('with alg none, or an alg the client is not registered for', async () => {
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const now = Math.floor(clock.now() / 1000);
    const claims = {
      iss: pkj.client_id,
      sub: pkj.client_id,
      aud: t.url,
      exp: now + 60,
      jti: crypto.randomUUID(),
    };
    for (const alg of ['none', 'None'])
      await expectRefused(
        await grant(`${enc({ alg })}.${enc(claims)}.`),
        401,
        'invalid_client',
        'alg none is refused',
      );
    // A public key is no HMAC key: HS256 keyed by the public JWK's text is refused by the alg alone.
    const hs = await assertion(
      pkj.client_id,
      new TextEncoder().encode(JSON.stringify(keyA.jwk)),
      {},
      { alg: 'HS256' },
    );
    await expectRefused(await grant(hs), 401, 'invalid_client', 'registered for private_key_jwt');
    const es = await assertion(csj.client_id, keyA.privateKey);
    await expectRefused(await grant(es), 401, 'invalid_client', 'registered for client_secret_jwt');
    await expectRefused(await grant('not.a.jwt'), 401, 'invalid_client', 'not a JWT');
  });

  it("when it is not the client's registered method, either way", async () => {
    // private_key_jwt: no secret was given, and one presented (anything) is refused by the method.
    expect((pkj as { client_secret?: string }).client_secret).toBeUndefined();
    const bySecret = await t.post('/oauth2/tokens', 'grant_type=client_credentials', {
      authorization: basic(pkj.client_id, 'ocs_guess'),
    });
    await expectRefused(bySecret, 401, 'invalid_client', 'registered for private_key_jwt');
    const noSecret = await t.post(
      '/oauth2/tokens',
      `grant_type=client_credentials&client_id=${pkj.client_id}`,
    );
    await expectRefused(noSecret, 401, 'invalid_client', 'registered for private_key_jwt');
    // client_secret_jwt: its own secret, sent as a secret, is refused too.
    const csjBasic = await t.post('/oauth2/tokens', 'grant_type=client_credentials', {
      authorization: basic(csj.client_id, csj.client_secret!),
    });
    await expectRefused(csjBasic, 401, 'invalid_client', 'registered for client_secret_jwt');
    // A client_secret_basic client cannot switch to assertions made with its secret.
    const hs = await assertion(
      plain.client_id,
      new TextEncoder().encode(plain.client_secret!),
      {},
      { alg: 'HS256' },
    );
    await expectRefused(await grant(hs), 401, 'invalid_client', 'registered for client_secret_basic');
    const mine = await t.call('POST', `/oauth2/clients/${pkj.client_id}/secret`);
    await expectStatus(mine, 400);
  });

  it('beside another method, or with a wrong or missing assertion type', async () => {
    const a = await assertion(pkj.client_id, keyA.privateKey);
    await expectRefused(
      await grant(a, {}, { authorization: basic(plain.client_id, plain.client_secret!) }),
      400,
      'invalid_request',
      'authenticates twice',
    );
    await expectRefused(
      await grant(a, { client_secret: 'x' }),
      400,
      'invalid_request',
      'authenticates twice',
    );
    const wrongType = await t.post(
      '/oauth2/tokens',
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'saml',
        client_assertion: a,
      }),
    );
    await expectRefused(wrongType, 400, 'invalid_request', `client_assertion_type must be ${JWT_BEARER}`);
    const noType = await t.post(
      '/oauth2/tokens',
      new URLSearchParams({ grant_type: 'client_credentials', client_assertion: a }),
    );
    await expectRefused(noType, 400, 'invalid_request', 'client_assertion_type is required');
  });
});

describe('used assertions are shared by the replicas', () => {
  it('refuses on a second service, on the same database, an assertion the first accepted', async () => {
    // A second replica on the same database (its stop leaves the database to the first).
    const storage = { ...t.service.ctx.storage, close: async () => {} };
    const second = await startOAuth2Service({ clock, storage, env: { PUBLIC_BASE_URL: t.url } });
    try {
      const once = await assertion(pkj.client_id, keyA.privateKey);
      await expectStatus(await grant(once), 200);
      const replayed = await second.post(
        '/oauth2/tokens',
        new URLSearchParams({
          grant_type: 'client_credentials',
          client_assertion_type: JWT_BEARER,
          client_assertion: once,
        }),
      );
      await expectRefused(replayed, 401, 'invalid_client', 'used before');
    } finally {
      await second.stop();
    }
  });
});
