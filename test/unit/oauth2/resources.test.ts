import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { CLIENTS, expectOAuthError, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

// Access tokens' audience (RFC 9068 §4, RFC 8707): the resource asked for, else the organization's own,
// so that a resource server checking aud never takes another tenant's token.

let t: OAuth2TestService;
let as: oauth.AuthorizationServer;
let other: CallOptions;
const http = { [oauth.allowInsecureRequests]: true } as const;
const API = 'https://api.acme.example/v1';

beforeAll(async () => {
  t = await startOAuth2Service();
  const issuer = new URL(t.url);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...http }),
  );
  const made = await t.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
});
afterAll(() => t.stop());

const ownAudience = (orgId: string) => `${t.url}/organizations/${orgId}`;

/** client_credentials through oauth4webapi, answered raw so a refusal can be read. */
function grantRequest(
  c: { client_id: string; client_secret?: string },
  parameters: Record<string, string> = {},
) {
  return oauth.clientCredentialsGrantRequest(
    as,
    { client_id: c.client_id },
    oauth.ClientSecretBasic(c.client_secret!),
    parameters,
    http,
  );
}
async function accessToken(
  c: { client_id: string; client_secret?: string },
  parameters: Record<string, string> = {},
) {
  const res = await grantRequest(c, parameters);
  return (await oauth.processClientCredentialsResponse(as, { client_id: c.client_id }, res)).access_token;
}

/** What a resource server of `audience` concludes of a token (RFC 9068 through oauth4webapi). */
const validFor = (token: string, audience: string) =>
  oauth
    .validateJwtAccessToken(
      as,
      new Request('https://api.acme.example/v1/things', { headers: { authorization: `Bearer ${token}` } }),
      audience,
      http,
    )
    .then(
      () => true,
      () => false,
    );

describe('the audience of access tokens', () => {
  it("is each organization's own without a resource: a resource server of one refuses the other's", async () => {
    const mine = await t.createClient();
    const theirs = await t.createClient({}, other);
    const a = await accessToken(mine);
    const b = await accessToken(theirs);
    expect(decodeJwt(a).aud).toBe(ownAudience(t.org.id));
    expect(decodeJwt(b).aud).toBe(ownAudience(other.orgId!));
    expect(decodeJwt(a).aud).not.toBe(decodeJwt(b).aud);
    expect(await validFor(a, ownAudience(t.org.id))).toBe(true);
    expect(await validFor(b, ownAudience(t.org.id))).toBe(false);
    expect(await validFor(b, ownAudience(other.orgId!))).toBe(true);
  });

  it("is the resource asked for when the client lists it, or the organization's own named", async () => {
    const c = await t.createClient({ resources: [API] });
    const token = await accessToken(c, { resource: API });
    expect(decodeJwt(token).aud).toBe(API);
    expect(await validFor(token, API)).toBe(true);
    expect(await validFor(token, ownAudience(t.org.id))).toBe(false);
    const own = await accessToken(c, { resource: ownAudience(t.org.id) });
    expect(decodeJwt(own).aud).toBe(ownAudience(t.org.id));
  });

  it('refuses a resource the client does not list with invalid_target', async () => {
    const c = await t.createClient({ resources: [API] });
    for (const resource of ['https://api.other.example/', `${API}/`, ownAudience(other.orgId!), t.url]) {
      const description = await expectOAuthError(await grantRequest(c, { resource }), 400, 'invalid_target');
      expect(description).toContain(JSON.stringify(resource));
    }
  });

  it('refuses two resources in one request with invalid_target', async () => {
    const c = await t.createClient({ resources: [API, 'https://api.acme.example/v2'] });
    const res = await t.post(
      '/oauth2/tokens',
      new URLSearchParams([
        ['grant_type', 'client_credentials'],
        ['resource', API],
        ['resource', 'https://api.acme.example/v2'],
      ]),
      { authorization: `Basic ${btoa(`${c.client_id}:${c.client_secret}`)}` },
    );
    expect(await expectOAuthError(res, 400, 'invalid_target')).toContain('more than once');
  });
});

describe('the resources of a client', () => {
  it('are shown, kept without repeats, and changed by PATCH', async () => {
    const created = await t.call('POST', CLIENTS, {
      body: {
        client_name: 'R',
        scopes: [],
        grant_types: ['client_credentials'],
        resources: [API, API, 'urn:acme:api'],
      },
    });
    await expectStatus(created, 201);
    expect(created.json.result.resources).toEqual([API, 'urn:acme:api']);
    const id = created.json.result.client_id;
    const patched = await t.call('PATCH', `${CLIENTS}/${id}`, { body: { resources: [] } });
    await expectStatus(patched, 200);
    expect(patched.json.result.resources).toEqual([]);
    const plain = await t.createClient();
    expect((await t.call('GET', `${CLIENTS}/${plain.client_id}`)).json.result.resources).toEqual([]);
  });

  it('are absolute URIs without a fragment, refused with 400 naming the member and the rule', async () => {
    const cases: Array<[unknown, string]> = [
      [['https://api.acme.example/#x'], 'body.resources[0]: must not contain a fragment'],
      [[API, '/relative'], 'body.resources[1]: must be an absolute URI'],
      [['https://api.acme.example/ x'], 'body.resources[0]: must not contain white space'],
      [[42], 'body.resources[0]: must be a string'],
      ['https://api.acme.example/', 'body.resources: must be an array of URIs'],
    ];
    for (const [resources, says] of cases) {
      const res = await t.call('POST', CLIENTS, {
        body: { client_name: 'R', scopes: [], grant_types: ['client_credentials'], resources },
      });
      await expectStatus(res, 400);
      expect(res.text).toContain(says);
    }
  });

  it("never include another organization's audience, or anything under the public base URL", async () => {
    const c = await t.createClient();
    for (const uri of [
      ownAudience(other.orgId!),
      ownAudience(t.org.id),
      t.url,
      `${t.url}/`,
      `${t.url}/oauth2/userinfo`,
    ]) {
      const created = await t.call('POST', CLIENTS, {
        body: { client_name: 'R', scopes: [], grant_types: ['client_credentials'], resources: [API, uri] },
      });
      await expectStatus(created, 400);
      expect(created.json.errors[0].message).toContain('body.resources[1]');
      expect(created.json.errors[0].message).toContain('public base URL');
      const patched = await t.call('PATCH', `${CLIENTS}/${c.client_id}`, { body: { resources: [uri] } });
      await expectStatus(patched, 400);
      expect(patched.json.errors[0].message).toContain('body.resources[0]');
    }
  });
});
