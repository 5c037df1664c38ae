import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { basic, CLIENTS, expectOAuthError, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
let other: CallOptions;
beforeAll(async () => {
  t = await startOAuth2Service();
  const { organization, apiKey } = await t.service.ctx.orgs.create('Other');
  other = { orgId: organization.id, key: apiKey };
});
afterAll(() => t.stop());

const grantWith = (id: string, secret: string) =>
  t.post('/oauth2/tokens', 'grant_type=client_credentials', { authorization: basic(id, secret) });

describe('OAuth 2.0 clients', () => {
  it('creates a confidential client with 201, its secret shown once and never again', async () => {
    const res = await t.call('POST', CLIENTS, {
      body: {
        client_name: 'Billing service',
        scopes: ['invoices:read', 'invoices:write', 'invoices:read'],
        grant_types: ['client_credentials'],
      },
    });
    await expectStatus(res, 201);
    const made = res.json.result;
    expect(made).toEqual({
      client_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      client_name: 'Billing service',
      grant_types: ['client_credentials'],
      response_types: [],
      scopes: ['invoices:read', 'invoices:write'],
      access_token_duration: 3600,
      refresh_token_duration: 864000,
      public: false,
      redirect_uris: [],
      resources: [],
      post_logout_redirect_uris: [],
      backchannel_logout_session_required: false,
      first_party: true,
      organization_issuer: false,
      issuer: t.url,
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'invoices:read invoices:write',
      contacts: [],
      require_pushed_authorization_requests: false,
      dpop_bound_access_tokens: false,
      created_at: expect.any(String),
      client_secret: expect.stringMatching(/^ocs_[A-Za-z0-9_-]{43}$/),
    });
    const { client_secret: secret, ...shown } = made;
    const got = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    await expectStatus(got, 200);
    expect(got.json.result).toEqual(shown);
    const list = await t.call('GET', CLIENTS);
    await expectStatus(list, 200);
    expect(list.json.result).toContainEqual(shown);
    for (const text of [got.text, list.text]) expect(text).not.toContain(secret);
    // Only a digest is kept: the row holds no trace of the secret itself.
    const rows = await t.service.ctx.storage.query<{ secret_digest: string }>(
      (await import('drizzle-orm'))
        .sql`select secret_digest from oauth2_clients where client_id = ${made.client_id}`,
    );
    expect(rows[0]!.secret_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(secret.slice(4));
  });

  it('creates a public client without a secret, with response_types [["code"]]', async () => {
    const res = await t.call('POST', CLIENTS, {
      body: {
        client_name: 'SPA',
        scopes: ['openid'],
        grant_types: ['authorization_code', 'refresh_token'],
        redirect_uris: ['https://app.example/callback', 'http://localhost:3000/cb', 'http://[::1]/cb'],
        public: true,
      },
    });
    await expectStatus(res, 201);
    expect(res.json.result).toMatchObject({ public: true, response_types: [['code']] });
    expect(res.json.result.client_secret).toBeUndefined();
    const secret = await t.call('POST', `${CLIENTS}/${res.json.result.client_id}/secret`);
    await expectStatus(secret, 400);
    expect(secret.json.errors[0].message).toContain('is public: it has no secret');
  });

  it.each([
    [{ client_name: '' }, 'body.client_name: must not be empty'],
    [{ scopes: ['a b'] }, 'body.scopes[0]: must be a scope token'],
    [{ grant_types: [] }, 'body.grant_types: must list at least one grant type'],
    [
      { grant_types: ['password'] },
      'body.grant_types[0]: must be one of client_credentials, authorization_code, refresh_token',
    ],
    [
      { redirect_uris: ['http://app.example/cb'] },
      'body.redirect_uris[0]: must use https (http only on a loopback host',
    ],
    [
      { redirect_uris: ['https://app.example/cb#frag'] },
      'body.redirect_uris[0]: must not contain a fragment',
    ],
    [{ redirect_uris: ['/relative'] }, 'body.redirect_uris[0]: must be an absolute URL'],
    [{ redirect_uris: ['myapp://cb'] }, 'body.redirect_uris[0]: must use https (got the scheme myapp)'],
    [
      { redirect_uris: ['https://u:p@app.example/cb'] },
      'body.redirect_uris[0]: must not carry a user name or password',
    ],
    [
      { redirect_uris: ['https://a.example\\@evil.example/cb'] },
      'body.redirect_uris[0]: must not contain a backslash',
    ],
    [{ access_token_duration: 30 }, 'body.access_token_duration: must be at least 60 seconds'],
    [{ access_token_duration: 1.5 }, 'body.access_token_duration: must be an integer number of seconds'],
    [{ refresh_token_duration: 10 ** 9 }, 'body.refresh_token_duration: must be at most 31536000 seconds'],
    [
      { colour: 'blue' },
      'body.colour: is not a member of an OAuth 2.0 client (accepted: client_name, scopes',
    ],
    [
      { public: true },
      'body.grant_types: a public client cannot use client_credentials (it has no secret to authenticate with)',
    ],
    [
      { grant_types: ['authorization_code'] },
      'body.redirect_uris: a client with the authorization_code grant needs at least one redirect URI',
    ],
    [
      { grant_types: ['client_credentials', 'refresh_token'] },
      'body.grant_types: refresh_token needs authorization_code or urn:ietf:params:oauth:grant-type:device_code (refresh tokens are issued by those grants)',
    ],
  ])('refuses %j with 400 naming the field and the rule', async (change, message) => {
    const res = await t.call('POST', CLIENTS, {
      body: { client_name: 'x', scopes: [], grant_types: ['client_credentials'], ...change },
    });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toStartWith(message);
  });

  it('refuses a body without the required members, naming each', async () => {
    const res = await t.call('POST', CLIENTS, { body: {} });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toBe('body.client_name: is required; body.grant_types: is required');
    // scopes may come as scope (RFC 7591): one of them is required, checked once the members are there.
    const scopeless = await t.call('POST', CLIENTS, {
      body: { client_name: 'x', grant_types: ['client_credentials'] },
    });
    await expectStatus(scopeless, 400);
    expect(scopeless.json.errors[0].message).toBe(
      'body.scopes: is required (or scope, the RFC 7591 space-delimited string)',
    );
    for (const body of [[], 'x', 5]) {
      const wrong = await t.call('POST', CLIENTS, { body });
      await expectStatus(wrong, 400);
      expect(wrong.json.errors[0].message).toBe('body: must be a JSON object');
    }
  });

  it('modifies what is given, keeps the rest, and resets a duration with null', async () => {
    const made = await t.createClient({ access_token_duration: 600 });
    const res = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, {
      body: { client_name: 'Renamed', scopes: ['read'], access_token_duration: null },
    });
    await expectStatus(res, 200);
    expect(res.json.result).toMatchObject({
      client_name: 'Renamed',
      scopes: ['read'],
      grant_types: ['client_credentials'],
      access_token_duration: 3600,
    });
    const bad = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, {
      body: { grant_types: ['authorization_code'] },
    });
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toBe(
      'body.redirect_uris (the client after this change): a client with the authorization_code grant needs at least one redirect URI',
    );
    const pub = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, { body: { public: true } });
    await expectStatus(pub, 400);
    expect(pub.json.errors[0].message).toContain('body.public: is not a member a PATCH may change');
  });

  it('takes a change to the token endpoint at once: grant types, scopes', async () => {
    const made = await t.createClient({ scopes: ['read', 'write'] });
    await expectStatus(await grantWith(made.client_id, made.client_secret!), 200);
    await expectStatus(
      await t.call('PATCH', `${CLIENTS}/${made.client_id}`, { body: { scopes: ['read'] } }),
      200,
    );
    const narrowed = await t.post('/oauth2/tokens', 'grant_type=client_credentials&scope=write', {
      authorization: basic(made.client_id, made.client_secret!),
    });
    await expectOAuthError(narrowed, 400, 'invalid_scope');
    await expectStatus(
      await t.call('PATCH', `${CLIENTS}/${made.client_id}`, {
        body: { grant_types: ['authorization_code'], redirect_uris: ['https://app.example/cb'] },
      }),
      200,
    );
    await expectOAuthError(await grantWith(made.client_id, made.client_secret!), 400, 'unauthorized_client');
  });

  it('issues a new secret (POST or PUT): the old one stops working at once', async () => {
    const made = await t.createClient();
    await expectStatus(await grantWith(made.client_id, made.client_secret!), 200);
    const renewed = await t.call('POST', `${CLIENTS}/${made.client_id}/secret`);
    await expectStatus(renewed, 200);
    const secret: string = renewed.json.result.client_secret;
    expect(secret).toMatch(/^ocs_/);
    expect(secret).not.toBe(made.client_secret);
    await expectOAuthError(await grantWith(made.client_id, made.client_secret!), 401, 'invalid_client');
    await expectStatus(await grantWith(made.client_id, secret), 200);
    const again = await t.call('PUT', `${CLIENTS}/${made.client_id}/secret`);
    await expectStatus(again, 200);
    await expectOAuthError(await grantWith(made.client_id, secret), 401, 'invalid_client');
    await expectStatus(await grantWith(made.client_id, again.json.result.client_secret), 200);
  });

  it('deletes with 204: the client can no longer get tokens, and a second delete is 404', async () => {
    const made = await t.createClient();
    await expectStatus(await grantWith(made.client_id, made.client_secret!), 200);
    await expectStatus(await t.call('DELETE', `${CLIENTS}/${made.client_id}`), 204);
    await expectOAuthError(await grantWith(made.client_id, made.client_secret!), 401, 'invalid_client');
    await expectStatus(await t.call('DELETE', `${CLIENTS}/${made.client_id}`), 404);
    await expectStatus(await t.call('GET', `${CLIENTS}/${made.client_id}`), 404);
  });

  it('answers 404 for an ID that is no client, a UUID or not', async () => {
    for (const id of ['00000000-0000-7000-8000-000000000000', 'nope']) {
      const res = await t.call('GET', `${CLIENTS}/${id}`);
      await expectStatus(res, 404);
      expect(res.json.errors[0].message).toBe(
        `no OAuth 2.0 client with client_id "${id}" in this organization`,
      );
    }
  });

  it('requires the organization API key', async () => {
    await expectStatus(await t.call('GET', CLIENTS, { key: null }), 401);
    const body = { client_name: 'x', scopes: [], grant_types: ['client_credentials'] };
    await expectStatus(await t.call('POST', CLIENTS, { key: 'isk_wrong', body }), 401);
  });
});

describe('tenant isolation', () => {
  it("never shows, changes, renews or deletes another organization's client", async () => {
    const mine = await t.createClient();
    const path = `${CLIENTS}/${mine.client_id}`;
    await expectStatus(await t.call('GET', path, other), 404);
    await expectStatus(await t.call('PATCH', path, { ...other, body: { client_name: 'stolen' } }), 404);
    await expectStatus(await t.call('POST', `${path}/secret`, other), 404);
    await expectStatus(await t.call('DELETE', path, other), 404);
    const list = await t.call('GET', CLIENTS, other);
    await expectStatus(list, 200);
    expect(list.json.result.map((c: { client_id: string }) => c.client_id)).not.toContain(mine.client_id);
    // Untouched: the secret still works, the name is the same.
    await expectStatus(await grantWith(mine.client_id, mine.client_secret!), 200);
    const got = await t.call('GET', path);
    expect(got.json.result.client_name).toBe('Test');
  });

  it("issues tokens that carry the client's own organization", async () => {
    const theirs = await t.createClient({}, other);
    const res = await grantWith(theirs.client_id, theirs.client_secret!);
    await expectStatus(res, 200);
    const { access_token } = await res.json();
    const claims = JSON.parse(atob(access_token.split('.')[1].replaceAll('-', '+').replaceAll('_', '/')));
    expect(claims.oid).toBe(other.orgId!);
    expect(claims.oid).not.toBe(t.org.id);
  });
});
