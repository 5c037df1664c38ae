import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver } from '../../helpers/tls.ts';
import { type OAuth2TestService, startOAuth2Service } from './fixture.ts';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const KEYS_HOST = 'keys.hooks.test';

interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}
async function keyPair(kid: string): Promise<KeyPair> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), kid } };
}

let keyA: KeyPair;
let keyB: KeyPair;
/** What the client's jwks_uri serves now. */
let served: JWK[] = [];
let keys: HttpsReceiver;

beforeAll(async () => {
  [keyA, keyB] = await Promise.all([keyPair('a'), keyPair('b')]);
  keys = startHttpsReceiver(() => Response.json({ keys: served }));
});
afterAll(() => keys.stop());

/** A service whose host map sends keys.hooks.test to loopback; `allow` sets CLIENT_JWKS_ALLOW_PRIVATE. */
const startWith = (clock: ReturnType<typeof manualClock>, allow?: string) =>
  startOAuth2Service({
    clock,
    env: {
      DELIVERY_HOST_MAP: `${KEYS_HOST}=127.0.0.1`,
      ...(allow !== undefined ? { CLIENT_JWKS_ALLOW_PRIVATE: allow } : {}),
    },
  });

async function assertion(t: OAuth2TestService, clientId: string, key: KeyPair, clock: { now(): number }) {
  const now = Math.floor(clock.now() / 1000);
  return new SignJWT({ iss: clientId, sub: clientId, aud: t.url, exp: now + 60, jti: crypto.randomUUID() })
    .setProtectedHeader({ alg: 'ES256', kid: key.jwk.kid! })
    .sign(key.privateKey);
}

const grant = (t: OAuth2TestService, clientAssertion: string) =>
  t.post(
    '/oauth2/tokens',
    new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: JWT_BEARER,
      client_assertion: clientAssertion,
    }),
  );

async function expectInvalidClient(res: Response, says: string) {
  await expectStatus(res, 401);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_client');
  expect(body.error_description).toContain(says);
}

describe("a private_key_jwt client's jwks_uri", () => {
  it('is fetched through the address guard, and a private address is refused without CLIENT_JWKS_ALLOW_PRIVATE', async () => {
    const clock = manualClock(Date.now());
    const t = await startWith(clock);
    try {
      served = [keyA.jwk];
      const before = keys.requests.length;
      const client = await t.createClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: keys.url('/jwks', KEYS_HOST),
      });
      const res = await grant(t, await assertion(t, client.client_id, keyA, clock));
      // The tenant reads that the keys could not be fetched, nothing about the address.
      await expectInvalidClient(res, "the client's jwks_uri could not be fetched");
      expect(keys.requests.length).toBe(before);
    } finally {
      await t.stop();
    }
  });

  it('is fetched once and cached, and fetched again for a rotated kid, at most once per 10 s', async () => {
    const clock = manualClock(Date.now());
    const t = await startWith(clock, '127.0.0.0/8');
    try {
      served = [keyA.jwk];
      const client = await t.createClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: keys.url('/rotating', KEYS_HOST),
      });
      const fetches = () => keys.requests.filter((r) => r.path === '/rotating').length;
      // openid-client's PrivateKeyJwt, from discovery on.
      const config = await oidc.discovery(
        new URL(t.url),
        client.client_id,
        undefined,
        oidc.PrivateKeyJwt({ key: keyA.privateKey, kid: 'a' }),
        { execute: [oidc.allowInsecureRequests] },
      );
      expect((await oidc.clientCredentialsGrant(config)).access_token).toBeString();
      expect((await oidc.clientCredentialsGrant(config)).access_token).toBeString();
      expect(fetches()).toBe(1);
      // The client rotates to key b: within 10 s of the last fetch, an unknown kid does not refetch.
      served = [keyB.jwk];
      await expectInvalidClient(
        await grant(t, await assertion(t, client.client_id, keyB, clock)),
        'names no key',
      );
      expect(fetches()).toBe(1);
      clock.advance(11_000);
      await expectStatus(await grant(t, await assertion(t, client.client_id, keyB, clock)), 200);
      expect(fetches()).toBe(2);
      // Key a is gone from the fresh set: refused, and no new fetch so soon after the last.
      await expectInvalidClient(
        await grant(t, await assertion(t, client.client_id, keyA, clock)),
        'names no key',
      );
      expect(fetches()).toBe(2);
      // Past the cache's five minutes, the set is fetched again even for a known kid.
      clock.advance(301_000);
      await expectStatus(await grant(t, await assertion(t, client.client_id, keyB, clock)), 200);
      expect(fetches()).toBe(3);
    } finally {
      await t.stop();
    }
  });

  it('answering no key set, or keys with private members only, authenticates nobody', async () => {
    const clock = manualClock(Date.now());
    const t = await startWith(clock, '127.0.0.0/8');
    try {
      served = [{ ...keyA.jwk, d: 'AAAA' }];
      const privateOnly = await t.createClient({
        token_endpoint_auth_method: 'private_key_jwt',
        jwks_uri: keys.url('/private', KEYS_HOST),
      });
      const stop = startHttpsReceiver(() => new Response('not json', { status: 404 }));
      try {
        const nowhere = await t.createClient({
          token_endpoint_auth_method: 'private_key_jwt',
          jwks_uri: stop.url('/jwks', KEYS_HOST),
        });
        await expectInvalidClient(
          await grant(t, await assertion(t, nowhere.client_id, keyA, clock)),
          'answered no JWK Set (HTTP 404',
        );
      } finally {
        await stop.stop();
      }
      await expectInvalidClient(
        await grant(t, await assertion(t, privateOnly.client_id, keyA, clock)),
        'names no key',
      );
    } finally {
      await t.stop();
    }
  });
});
