import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../helpers/expect-status.ts';
import {
  basic,
  expectOAuthError,
  type OAuth2TestService,
  startOAuth2Service,
} from '../unit/oauth2/fixture.ts';
import { isolatedPostgres } from './support.ts';

const CACHE_MS = 300;
let a: OAuth2TestService;
let b: OAuth2TestService;
let drop: () => Promise<void>;
const http = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  const pg = await isolatedPostgres('oauth2');
  drop = pg.drop;
  // Two replicas on one database, each with its own client cache, behind one public URL (a's).
  a = await startOAuth2Service({ storage: pg.storage, oauth2: { clientCacheMs: CACHE_MS } });
  b = await startOAuth2Service({
    storage: await pg.another(),
    oauth2: { clientCacheMs: CACHE_MS },
    env: { PUBLIC_BASE_URL: a.url },
  });
});
afterAll(async () => {
  await a.stop();
  await b.stop();
  await drop();
});

/** Discovery from the public URL; the token endpoint then on one replica, as a load balancer would pick. */
async function discover(t: OAuth2TestService) {
  const issuer = new URL(a.url);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
  );
  return { ...as, token_endpoint: `${t.url}/oauth2/tokens` };
}

const grant = (t: OAuth2TestService, id: string, secret: string) =>
  t.post('/oauth2/tokens', 'grant_type=client_credentials&scope=read', { authorization: basic(id, secret) });

describe('oauth2 on Postgres, two replicas', () => {
  it('grants client_credentials through oauth4webapi on either replica, many at once', async () => {
    const c = await a.createClient();
    for (const t of [a, b]) {
      const as = await discover(t);
      const client = { client_id: c.client_id };
      const results = await Promise.all(
        Array.from({ length: 32 }, async () =>
          oauth.processClientCredentialsResponse(
            as,
            client,
            await oauth.clientCredentialsGrantRequest(
              as,
              client,
              oauth.ClientSecretBasic(c.client_secret!),
              { scope: 'read' },
              http,
            ),
          ),
        ),
      );
      expect(new Set(results.map((r) => r.access_token)).size).toBe(32);
      const request = new Request('https://api.example/', {
        headers: { authorization: `Bearer ${results[0]!.access_token}` },
      });
      const audience = `${a.url}/organizations/${a.org.id}`;
      expect((await oauth.validateJwtAccessToken(as, request, audience, http)).client_id).toBe(c.client_id);
    }
  });

  it("sees a new secret made on another replica within the cache's bound", async () => {
    const c = await a.createClient();
    await expectStatus(await grant(b, c.client_id, c.client_secret!), 200);
    const renewed = await a.call('POST', `/oauth2/clients/${c.client_id}/secret`);
    await expectStatus(renewed, 200);
    // At once on the replica that made it; on the other once its cached view has aged out.
    await expectOAuthError(await grant(a, c.client_id, c.client_secret!), 401, 'invalid_client');
    await Bun.sleep(CACHE_MS + 50);
    await expectOAuthError(await grant(b, c.client_id, c.client_secret!), 401, 'invalid_client');
    await expectStatus(await grant(b, c.client_id, renewed.json.result.client_secret), 200);
  });

  it('sees a revocation made on one replica at once on the other', async () => {
    const c = await a.createClient();
    const res = await grant(a, c.client_id, c.client_secret!);
    await expectStatus(res, 200);
    const { access_token } = await res.json();
    const introspect = (t: OAuth2TestService) =>
      t.post('/oauth2/tokens/introspect', `token=${access_token}`, {
        authorization: basic(c.client_id, c.client_secret!),
      });
    expect((await (await introspect(b)).json()).active).toBe(true);
    await expectStatus(
      await a.post('/oauth2/tokens/revoke', `token=${access_token}`, {
        authorization: basic(c.client_id, c.client_secret!),
      }),
      200,
    );
    expect(await (await introspect(b)).json()).toEqual({ active: false });
  });

  it('keeps organizations apart across replicas', async () => {
    const c = await a.createClient();
    await expectStatus(await b.call('GET', `/oauth2/clients/${c.client_id}`), 404);
    await expectStatus(await a.call('GET', `/oauth2/clients/${c.client_id}`), 200);
  });

  it('accepts a client assertion once across replicas, concurrent replays included', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const c = await a.createClient({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k' }] },
    });
    const now = Math.floor(Date.now() / 1000);
    const assertion = await new SignJWT({
      iss: c.client_id,
      sub: c.client_id,
      aud: a.url,
      exp: now + 60,
      jti: crypto.randomUUID(),
    })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .sign(privateKey);
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).post('/oauth2/tokens', form)),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 200))
      expect(await expectOAuthError(r, 401, 'invalid_client')).toContain('used before');
  });
});
