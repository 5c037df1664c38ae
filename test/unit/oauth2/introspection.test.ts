import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { oauth2Server } from '../../../core/capabilities/oauth2-server.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { basic, CLIENTS, expectOAuthError, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

const clock = manualClock(Date.now());
let t: OAuth2TestService;
let as: oauth.AuthorizationServer;
let other: CallOptions;
const http = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  t = await startOAuth2Service({ clock });
  const issuer = new URL(t.url);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
  );
  const { organization, apiKey } = await t.service.ctx.orgs.create('Other');
  other = { orgId: organization.id, key: apiKey };
});
afterAll(() => t.stop());

type Made = { client_id: string; client_secret?: string };

async function tokenFor(c: Made, scope = 'read'): Promise<string> {
  const client = { client_id: c.client_id };
  const res = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(c.client_secret!),
    { scope },
    http,
  );
  return (await oauth.processClientCredentialsResponse(as, client, res)).access_token;
}

async function introspect(by: Made, token: string) {
  const client = { client_id: by.client_id };
  const res = await oauth.introspectionRequest(
    as,
    client,
    oauth.ClientSecretPost(by.client_secret!),
    token,
    http,
  );
  expect(res.headers.get('cache-control')).toBe('no-store');
  return oauth.processIntrospectionResponse(as, client, res);
}

async function revoke(by: Made, token: string, hint?: string) {
  const res = await oauth.revocationRequest(
    as,
    { client_id: by.client_id },
    oauth.ClientSecretBasic(by.client_secret!),
    token,
    {
      ...http,
      ...(hint ? { additionalParameters: { token_type_hint: hint } } : {}),
    },
  );
  return res;
}

describe('introspection (RFC 7662), driven by oauth4webapi', () => {
  it('answers an active access token with its claims, to any confidential client of the organization', async () => {
    const issuer = await t.createClient();
    const resourceServer = await t.createClient({ scopes: [] });
    const token = await tokenFor(issuer);
    for (const by of [issuer, resourceServer]) {
      const answer = await introspect(by, token);
      expect(answer).toMatchObject({
        active: true,
        token_type: 'Bearer',
        client_id: issuer.client_id,
        sub: issuer.client_id,
        scope: 'read',
        iss: t.url,
        aud: `${t.url}/organizations/${t.org.id}`,
        oid: t.org.id,
      });
      expect(answer.exp! - answer.iat!).toBe(3600);
    }
  });

  it("answers another organization's token as inactive, and says nothing of it", async () => {
    const mine = await t.createClient();
    const theirs = await t.createClient({}, other);
    expect(await introspect(theirs, await tokenFor(mine))).toEqual({ active: false });
  });

  it('answers garbage, a forged token and an identity token as inactive', async () => {
    const c = await t.createClient();
    const token = await tokenFor(c);
    const [h, p] = token.split('.');
    const forged = `${h}.${p}.${'A'.repeat(86)}`;
    const person = await t.call('POST', '/persons', {
      body: { handles: [{ type: 'username', value: 'intro' }] },
    });
    await expectStatus(person, 201);
    const minted = await t.call('POST', `/persons/${person.json.result.person_id}/mint-token`, { body: {} });
    await expectStatus(minted, 201);
    for (const candidate of ['garbage', 'a.b.c', forged, minted.json.result])
      expect(await introspect(c, candidate)).toEqual({ active: false });
  });

  it('refuses a public client with invalid_client, and a missing token with invalid_request', async () => {
    const pub = await t.createClient({
      public: true,
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb'],
    });
    const c = await t.createClient();
    const token = await tokenFor(c);
    const res = await t.post('/oauth2/tokens/introspect', `token=${token}&client_id=${pub.client_id}`);
    expect(await expectOAuthError(res, 401, 'invalid_client')).toContain('is public');
    const none = await t.post('/oauth2/tokens/introspect', 'token_type_hint=access_token', {
      authorization: basic(c.client_id, c.client_secret!),
    });
    expect(await expectOAuthError(none, 400, 'invalid_request')).toBe('token is required');
    const unknown = await t.post('/oauth2/tokens/introspect', `token=${token}`, {
      authorization: basic(c.client_id, 'ocs_wrong'),
    });
    await expectOAuthError(unknown, 401, 'invalid_client');
  });

  it('answers a token whose client was deleted as inactive', async () => {
    const gone = await t.createClient();
    const asker = await t.createClient();
    const token = await tokenFor(gone);
    await expectStatus(await t.call('DELETE', `${CLIENTS}/${gone.client_id}`), 204);
    expect(await introspect(asker, token)).toEqual({ active: false });
  });

  it('answers an expired token as inactive', async () => {
    const c = await t.createClient({ access_token_duration: 60 });
    const token = await tokenFor(c);
    expect((await introspect(c, token)).active).toBe(true);
    clock.advance(61_000);
    expect(await introspect(c, token)).toEqual({ active: false });
  });
});

describe('revocation (RFC 7009), driven by oauth4webapi', () => {
  it('revokes an access token of this client: introspection says inactive from then on', async () => {
    const c = await t.createClient();
    const asker = await t.createClient();
    const token = await tokenFor(c);
    const res = await revoke(c, token, 'access_token');
    await expectStatus(res.clone(), 200);
    expect(await oauth.processRevocationResponse(res)).toBeUndefined();
    expect(await introspect(asker, token)).toEqual({ active: false });
    expect(await t.service.ctx.capability(oauth2Server)!.verifyAccessToken(token)).toBeUndefined();
    // Revoking again, or a token that is none, changes nothing and answers 200.
    for (const again of [token, 'garbage']) await expectStatus(await revoke(c, again), 200);
  });

  it("refuses to revoke another client's token of the organization with unauthorized_client", async () => {
    const owner = await t.createClient();
    const stranger = await t.createClient();
    const token = await tokenFor(owner);
    const res = await t.post('/oauth2/tokens/revoke', `token=${token}`, {
      authorization: basic(stranger.client_id, stranger.client_secret!),
    });
    expect(await expectOAuthError(res, 400, 'unauthorized_client')).toBe(
      'the token was issued to another client',
    );
    expect((await introspect(owner, token)).active).toBe(true);
  });

  it("leaves another organization's token alone and answers 200", async () => {
    const mine = await t.createClient();
    const theirs = await t.createClient({}, other);
    const token = await tokenFor(mine);
    await expectStatus(await revoke(theirs, token), 200);
    expect((await introspect(mine, token)).active).toBe(true);
  });

  it('lets a public client revoke by client_id alone, and needs the token', async () => {
    const pub = await t.createClient({
      public: true,
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb'],
    });
    await expectStatus(await t.post('/oauth2/tokens/revoke', `token=x&client_id=${pub.client_id}`), 200);
    const res = await t.post('/oauth2/tokens/revoke', `client_id=${pub.client_id}`);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe('token is required');
  });
});
