import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  discover,
  expectOAuthError,
  type MadeClient,
  opts,
  postForm,
  startAuthorizeService,
} from './fixture.ts';
import { tokenChecks } from './resource-server.ts';

let s: AuthorizeService;
let as: oauth.AuthorizationServer;
let check: ReturnType<typeof tokenChecks>;
/** A client that may refresh, with openid and offline_access among its scopes. */
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
  check = tokenChecks(
    s,
    as,
    await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] }),
  );
  client = await s.createClient({ scopes: ['openid', 'offline_access', 'read', 'write'] });
});
afterAll(() => s.stop());

const mint = (body: unknown, as: CallOptions = {}) => s.call('POST', '/oauth2/tokens/mint', { ...as, body });

/** Validates an access token as a resource server does (RFC 9068), with oauth4webapi. */
const validated = (token: string) =>
  oauth.validateJwtAccessToken(
    as,
    new Request('http://127.0.0.1:9/api', { headers: { authorization: `Bearer ${token}` } }),
    `${s.url}/organizations/${s.org.id}`,
    opts,
  );

describe('POST /oauth2/tokens/mint', () => {
  it('mints an RFC 9068 access token with the custom claims and authenticated_methods ["api"]', async () => {
    const person = await s.person();
    const res = await mint({
      person_id: person.personId,
      client_id: client.client_id,
      scopes: ['read', 'read'],
      custom_claims: { foo: 'bar', baz: { everything: 42 } },
    });
    await expectStatus(res, 200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(Object.keys(res.json.result)).toEqual(['access_token']);
    const token: string = res.json.result.access_token;
    expect(decodeProtectedHeader(token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(await validated(token)).toMatchObject({
      iss: s.url,
      sub: person.personId,
      aud: `${s.url}/organizations/${s.org.id}`,
      client_id: client.client_id,
      oid: s.org.id,
      scope: 'read',
      authenticated_methods: ['api'],
      foo: 'bar',
      baz: { everything: 42 },
    });
    expect(await check.introspect(token)).toMatchObject({ active: true, sub: person.personId });
  });

  it('adds an ID token for openid and a refresh token for offline_access, which refreshes', async () => {
    const person = await s.person();
    const hooked = s.hook.seen.length;
    const res = await mint({
      person_id: person.personId,
      client_id: client.client_id,
      scopes: ['openid', 'offline_access', 'read'],
      custom_claims: { plan: 'pro' },
    });
    await expectStatus(res, 200);
    const { access_token, id_token, refresh_token } = res.json.result;
    expect(refresh_token).toStartWith('isr_');
    expect(decodeJwt(id_token)).toMatchObject({
      iss: s.url,
      sub: person.personId,
      aud: client.client_id,
      azp: client.client_id,
      person_id: person.personId,
      authenticated_methods: ['api'],
      first_token: false,
      plan: 'pro',
    });
    expect((await validated(access_token)).scope).toBe('openid offline_access read');
    // Minted as mint-token is: no token_minted hook, TokenMinted_v1 with mint_token_api.
    expect(s.hook.seen.length).toBe(hooked);
    const minted = (await s.eventsNamed('TokenMinted_v1')).filter((e) => e.person_id === person.personId);
    expect(minted).toHaveLength(1);
    expect(minted[0]).toMatchObject({ mint_token_api: true });

    const refreshed = await check.refresh(client, refresh_token);
    await expectStatus(refreshed, 200);
    expect(refreshed.json).toMatchObject({ scope: 'openid offline_access read', token_type: 'bearer' });
  });

  it('mints tokens that revoke-all revokes, with or without a refresh token', async () => {
    const person = await s.person();
    const bare = await mint({ person_id: person.personId, client_id: client.client_id, scopes: ['read'] });
    const full = await mint({
      person_id: person.personId,
      client_id: client.client_id,
      scopes: ['offline_access', 'read'],
    });
    await expectStatus(bare, 200);
    await expectStatus(full, 200);
    const revoked = await postForm(s, '/oauth2/tokens/revoke-all', client, { person_id: person.personId });
    await expectStatus(revoked, 200);
    expect(await check.introspect(bare.json.result.access_token)).toEqual({ active: false });
    expect(await check.introspect(full.json.result.access_token)).toEqual({ active: false });
    await expectStatus(await check.userinfo(bare.json.result.access_token), 401);
    await expectOAuthError(await check.refresh(client, full.json.result.refresh_token), 400, 'invalid_grant');
  });

  it('answers the consistency headers as other writes do', async () => {
    const person = await s.person();
    const body = { person_id: person.personId, client_id: client.client_id };
    await expectStatus(await mint(body, { headers: { 'Service-Required-Consistency': 'all_regions' } }), 200);
    const res = await mint(body, { headers: { 'Service-Required-Consistency': 'everywhere' } });
    await expectStatus(res, 400);
  });
});

describe('POST /oauth2/tokens/mint refusals', () => {
  it('refuses a scope the client may not have, naming it', async () => {
    const person = await s.person();
    const res = await mint({ person_id: person.personId, client_id: client.client_id, scopes: ['admin'] });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toMatch(/scopes: "admin" is not among client/);
  });

  it('refuses offline_access for a client that may not refresh', async () => {
    const person = await s.person();
    const noRefresh = await s.createClient({
      scopes: ['offline_access', 'read'],
      grant_types: ['authorization_code'],
    });
    const res = await mint({
      person_id: person.personId,
      client_id: noRefresh.client_id,
      scopes: ['offline_access'],
    });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toMatch(/offline_access .* may not use the refresh_token grant/);
  });

  it('refuses each reserved claim, naming it', async () => {
    const person = await s.person();
    for (const claim of [
      'sub',
      'oid',
      'person_id',
      'authenticated_methods',
      'groups',
      'scope',
      'client_id',
      'nonce',
      'sid',
      // Introspection states these of a token itself (RFC 7662 §2.2).
      'active',
      'token_type',
      // Who acts for the person is a token exchange's to say (RFC 8693 §4.1, §4.4).
      'act',
      'may_act',
    ]) {
      const res = await mint({
        person_id: person.personId,
        client_id: client.client_id,
        custom_claims: { fine: 1, [claim]: 'x' },
      });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(`custom_claims.${claim}:`);
    }
  });

  it("answers 404 for another organization's client or person, and for unknown ones", async () => {
    const person = await s.person();
    const { organization, apiKey } = await s.service.ctx.orgs.create('Other');
    const other = { orgId: organization.id, key: apiKey };
    const foreignClient = await s.createClient({}, other);
    const foreignPerson = await s.person(other);

    const r1 = await mint({ person_id: person.personId, client_id: foreignClient.client_id });
    await expectStatus(r1, 404);
    expect(r1.json.errors[0].message).toMatch(/^client_id: no OAuth 2.0 client/);
    const r2 = await mint({ person_id: foreignPerson.personId, client_id: client.client_id });
    await expectStatus(r2, 404);
    expect(r2.json.errors[0].message).toMatch(/^person_id: no person/);
    // The other organization's key does not reach this organization's client either.
    await expectStatus(
      await mint({ person_id: foreignPerson.personId, client_id: client.client_id }, other),
      404,
    );
    await expectStatus(await mint({ person_id: crypto.randomUUID(), client_id: client.client_id }), 404);
  });

  it('refuses a disabled person (400) and a deleted one (404), naming person_id', async () => {
    const disabled = await s.person();
    await expectStatus(
      await s.call('PATCH', `/persons/${disabled.personId}`, { body: { active: false } }),
      200,
    );
    const r1 = await mint({ person_id: disabled.personId, client_id: client.client_id });
    await expectStatus(r1, 400);
    expect(r1.json.errors[0].message).toMatch(/^person_id: .* is disabled/);

    const deleted = await s.person();
    await expectStatus(await s.call('DELETE', `/persons/${deleted.personId}`), 204);
    const r2 = await mint({ person_id: deleted.personId, client_id: client.client_id });
    await expectStatus(r2, 404);
    expect(r2.json.errors[0].message).toMatch(/^person_id: no person/);
  });

  it('refuses a malformed body with 400 naming the field', async () => {
    const person_id = (await s.person()).personId;
    const cases: [unknown, RegExp][] = [
      [{ client_id: client.client_id }, /person_id/],
      [{ person_id: 'bob', client_id: client.client_id }, /person_id.*UUID/],
      [{ person_id }, /client_id/],
      [{ person_id, client_id: client.client_id, scopes: 'read' }, /scopes/],
      [{ person_id, client_id: client.client_id, scopes: [1] }, /scopes/],
      [{ person_id, client_id: client.client_id, custom_claims: ['x'] }, /custom_claims/],
      [[{ person_id, client_id: client.client_id }], /body/],
    ];
    for (const [body, rule] of cases) {
      const res = await mint(body);
      await expectStatus(res, 400);
      expect(res.json.errors.map((e: { message: string }) => e.message).join(' ')).toMatch(rule);
    }
  });

  it('needs the organization API key', async () => {
    const person = await s.person();
    const res = await mint({ person_id: person.personId, client_id: client.client_id }, { key: null });
    await expectStatus(res, 401);
  });
});
