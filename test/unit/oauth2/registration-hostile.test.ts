import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { CLIENTS, type OAuth2TestService, startOAuth2Service } from './fixture.ts';
import {
  bearer,
  expectRegistrationError,
  issueToken,
  MCP_CLIENT,
  POLICY,
  postJson,
  setPolicy,
  TOKENS,
} from './registration-fixture.ts';

let t: OAuth2TestService;
const clock = manualClock();
/** An organization of another tenant, with its own API key. */
let other: { id: string; key: string };

const REGISTER = '/oauth2/register';
const orgRegister = (orgId: string) => `/oauth2/organizations/${orgId}/register`;
const asOther = () => ({ orgId: other.id, key: other.key });

beforeAll(async () => {
  t = await startOAuth2Service({ clock });
  const made = await t.service.ctx.orgs.create('Other');
  other = { id: made.organization.id, key: made.apiKey };
});
afterAll(() => t.stop());

describe('initial access tokens that must not register', () => {
  it('refuses a request without a token at the deployment endpoint', async () => {
    const res = await postJson(t, REGISTER, MCP_CLIENT);
    expect(await expectRegistrationError(res, 401, 'invalid_token')).toContain('initial access token');
  });

  it('refuses an unknown token and a malformed Authorization header', async () => {
    await expectRegistrationError(
      await postJson(t, REGISTER, MCP_CLIENT, bearer('oit_not-a-token')),
      401,
      'invalid_token',
    );
    await expectRegistrationError(
      await postJson(t, REGISTER, MCP_CLIENT, { authorization: 'Basic abc' }),
      401,
      'invalid_token',
    );
  });

  it('refuses an expired token', async () => {
    const { token } = await issueToken(t, { expires_in: 60 });
    clock.advance(61_000);
    await expectRegistrationError(
      await postJson(t, REGISTER, MCP_CLIENT, bearer(token)),
      401,
      'invalid_token',
    );
  });

  it('refuses a used-up token', async () => {
    const { token } = await issueToken(t, { uses: 1 });
    await expectStatus(await postJson(t, REGISTER, MCP_CLIENT, bearer(token)), 201);
    await expectRegistrationError(
      await postJson(t, REGISTER, MCP_CLIENT, bearer(token)),
      401,
      'invalid_token',
    );
  });

  it('lets exactly one of two concurrent registrations take the last use', async () => {
    const { token } = await issueToken(t, { uses: 1 });
    const answers = await Promise.all([
      postJson(t, REGISTER, MCP_CLIENT, bearer(token)),
      postJson(t, REGISTER, MCP_CLIENT, bearer(token)),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([201, 401]);
  });

  it('does not spend a use on a request it refuses', async () => {
    const { id, token } = await issueToken(t, { uses: 1 });
    const bad = await postJson(
      t,
      REGISTER,
      { ...MCP_CLIENT, redirect_uris: ['http://evil.example/cb'] },
      bearer(token),
    );
    await expectRegistrationError(bad, 400, 'invalid_redirect_uri');
    const listed = (await t.call('GET', TOKENS)).json.result.find((x: { id: string }) => x.id === id);
    expect(listed.uses_left).toBe(1);
  });

  it('refuses a revoked token, which only its own organization can revoke', async () => {
    const { id, token } = await issueToken(t, { uses: 5 });
    // Another organization's key neither sees nor revokes it.
    const theirs = await t.call('GET', TOKENS, asOther());
    await expectStatus(theirs, 200);
    expect(theirs.json.result.map((x: { id: string }) => x.id)).not.toContain(id);
    await expectStatus(await t.call('DELETE', `${TOKENS}/${id}`, asOther()), 404);
    await expectStatus(await postJson(t, REGISTER, MCP_CLIENT, bearer(token)), 201);

    await expectStatus(await t.call('DELETE', `${TOKENS}/${id}`), 204);
    await expectRegistrationError(
      await postJson(t, REGISTER, MCP_CLIENT, bearer(token)),
      401,
      'invalid_token',
    );
    await expectStatus(await t.call('DELETE', `${TOKENS}/${id}`), 404);
    await expectStatus(await t.call('DELETE', `${TOKENS}/not-a-uuid`), 404);
  });

  it("refuses another organization's token at this organization's endpoint", async () => {
    const theirs = await issueToken(t, {}, asOther());
    const res = await postJson(t, orgRegister(t.org.id), MCP_CLIENT, bearer(theirs.token));
    expect(await expectRegistrationError(res, 401, 'invalid_token')).toContain('organization');
  });

  it("registers a client into the token's organization, never the caller's choice", async () => {
    const theirs = await issueToken(t, {}, asOther());
    const res = await postJson(t, REGISTER, MCP_CLIENT, bearer(theirs.token));
    await expectStatus(res, 201);
    const { client_id } = await res.json();
    await expectStatus(await t.call('GET', `${CLIENTS}/${client_id}`), 404);
    await expectStatus(await t.call('GET', `${CLIENTS}/${client_id}`, asOther()), 200);
  });

  it('answers 404 for an organization endpoint of no organization', async () => {
    await expectStatus(await postJson(t, orgRegister(crypto.randomUUID()), MCP_CLIENT), 404);
    await expectStatus(await postJson(t, orgRegister('nope'), MCP_CLIENT), 404);
  });
});

describe('open registration that must not register', () => {
  it('refuses a request without a token while the organization has not allowed open registration', async () => {
    const res = await postJson(t, orgRegister(other.id), MCP_CLIENT);
    expect(await expectRegistrationError(res, 401, 'invalid_token')).toContain('open registration');
    // One organization's policy opens no other organization.
    await setPolicy(t, { open_registration: true, per_address_per_hour: 1000 });
    await expectRegistrationError(await postJson(t, orgRegister(other.id), MCP_CLIENT), 401, 'invalid_token');
  });

  it('does not fall back to open registration for a bad token', async () => {
    const theirs = await issueToken(t, {}, asOther());
    for (const token of ['oit_unknown', theirs.token])
      await expectRegistrationError(
        await postJson(t, orgRegister(t.org.id), MCP_CLIENT, bearer(token)),
        401,
        'invalid_token',
      );
  });

  it('refuses a confidential client, client_credentials and token exchange', async () => {
    const secret = await postJson(t, orgRegister(t.org.id), {
      ...MCP_CLIENT,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(await expectRegistrationError(secret, 400, 'invalid_client_metadata')).toStartWith(
      'token_endpoint_auth_method: open registration makes public clients only',
    );
    const defaulted = { ...MCP_CLIENT, token_endpoint_auth_method: undefined };
    // Left out, the method of an open registration is none: a public client.
    const made = await postJson(t, orgRegister(t.org.id), defaulted);
    await expectStatus(made, 201);
    expect((await made.json()).token_endpoint_auth_method).toBe('none');
    for (const grant of ['client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange']) {
      const res = await postJson(t, orgRegister(t.org.id), { ...MCP_CLIENT, grant_types: [grant] });
      expect(await expectRegistrationError(res, 400, 'invalid_client_metadata')).toStartWith('grant_types:');
    }
  });

  it('refuses a client that asks only for scopes the organization did not allow', async () => {
    await setPolicy(t, { open_registration: true, per_address_per_hour: 1000, allowed_scopes: ['openid'] });
    const res = await postJson(t, orgRegister(t.org.id), { ...MCP_CLIENT, scope: 'admin' });
    expect(await expectRegistrationError(res, 400, 'invalid_client_metadata')).toStartWith('scope:');
  });

  it('keeps an open-registered client within the allowed scopes when it replaces its metadata', async () => {
    const made = await (await postJson(t, orgRegister(t.org.id), MCP_CLIENT)).json();
    const res = await postJson(
      t,
      new URL(made.registration_client_uri).pathname,
      { ...MCP_CLIENT, client_id: made.client_id, scope: 'openid admin' },
      bearer(made.registration_access_token),
      'PUT',
    );
    await expectStatus(res, 200);
    expect((await res.json()).scope).toBe('openid');
  });

  it('answers 429 with Retry-After past the rate per address', async () => {
    const org = await t.service.ctx.orgs.create('Rated');
    const as = { orgId: org.organization.id, key: org.apiKey };
    await setPolicy(t, { open_registration: true, per_address_per_hour: 2 }, as);
    for (let i = 0; i < 2; i++)
      await expectStatus(await postJson(t, orgRegister(org.organization.id), MCP_CLIENT), 201);
    const res = await postJson(t, orgRegister(org.organization.id), MCP_CLIENT);
    const retry = Number(res.headers.get('retry-after'));
    expect(await expectRegistrationError(res, 429, 'too_many_requests')).toContain('address');
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(3600);
    // The rate is per organization: the address still registers elsewhere.
    await expectStatus(await postJson(t, orgRegister(t.org.id), MCP_CLIENT), 201);
  });

  it('answers 429 with Retry-After once the organization has max_open_clients, and frees a place on delete', async () => {
    const org = await t.service.ctx.orgs.create('Capped');
    const as = { orgId: org.organization.id, key: org.apiKey };
    await setPolicy(t, { open_registration: true, max_open_clients: 2, per_address_per_hour: 1000 }, as);
    const made = await Promise.all(
      [1, 2, 3].map(() => postJson(t, orgRegister(org.organization.id), MCP_CLIENT)),
    );
    // Racing for the last places, none goes past the limit.
    const admitted = made.filter((r) => r.status === 201);
    expect(admitted.length).toBeLessThanOrEqual(2);
    const openIds: string[] = [];
    for (const r of admitted) openIds.push((await r.json()).client_id);
    while ((await t.call('GET', POLICY, as)).json.result.open_clients < 2) {
      const res = await postJson(t, orgRegister(org.organization.id), MCP_CLIENT);
      await expectStatus(res, 201);
      openIds.push((await res.json()).client_id);
    }

    const full = await postJson(t, orgRegister(org.organization.id), MCP_CLIENT);
    expect(full.headers.get('retry-after')).toBe('3600');
    expect(await expectRegistrationError(full, 429, 'too_many_requests')).toContain('max_open_clients');
    // Clients made with an initial access token do not count.
    const { token } = await issueToken(t, {}, as);
    await expectStatus(await postJson(t, orgRegister(org.organization.id), MCP_CLIENT, bearer(token)), 201);

    await expectStatus(await t.call('DELETE', `${CLIENTS}/${openIds[0]}`, as), 204);
    expect((await t.call('GET', POLICY, as)).json.result.open_clients).toBe(1);
    await expectStatus(await postJson(t, orgRegister(org.organization.id), MCP_CLIENT), 201);
  });

  it('refuses a policy out of its bounds, naming the member', async () => {
    for (const [body, member] of [
      [{ open_registration: 'yes' }, 'open_registration'],
      [{ max_open_clients: 0 }, 'max_open_clients'],
      [{ per_address_per_hour: 1001 }, 'per_address_per_hour'],
      [{ allowed_scopes: ['has space'] }, 'allowed_scopes'],
      [{ scopes: [] }, 'scopes'],
    ] as const) {
      const res = await t.call('PUT', POLICY, { body });
      await expectStatus(res, 400);
      expect(res.text).toContain(member);
    }
  });
});

describe('registration access tokens that must not manage a client', () => {
  async function registered() {
    const { token } = await issueToken(t);
    return (await postJson(t, REGISTER, MCP_CLIENT, bearer(token))).json();
  }

  it("refuses one client's token for another client, and no token at all", async () => {
    const a = await registered();
    const b = await registered();
    const bUri = `${t.url}${new URL(b.registration_client_uri).pathname}`;
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(bUri, { method, headers: bearer(a.registration_access_token) });
      await expectRegistrationError(res, 401, 'invalid_token');
    }
    const put = await postJson(
      t,
      new URL(b.registration_client_uri).pathname,
      { ...MCP_CLIENT, client_id: b.client_id },
      bearer(a.registration_access_token),
      'PUT',
    );
    await expectRegistrationError(put, 401, 'invalid_token');
    await expectRegistrationError(await fetch(bUri), 401, 'invalid_token');
    // b is still there, unchanged.
    await expectStatus(await fetch(bUri, { headers: bearer(b.registration_access_token) }), 200);
  });

  it("refuses a deleted client's token", async () => {
    const a = await registered();
    const uri = `${t.url}${new URL(a.registration_client_uri).pathname}`;
    await expectStatus(await t.call('DELETE', `${CLIENTS}/${a.client_id}`), 204);
    await expectRegistrationError(
      await fetch(uri, { headers: bearer(a.registration_access_token) }),
      401,
      'invalid_token',
    );
  });

  it('has no token for a client created through /oauth2/clients', async () => {
    const made = await t.createClient();
    const a = await registered();
    const res = await fetch(`${t.url}/oauth2/register/${made.client_id}`, {
      headers: bearer(a.registration_access_token),
    });
    await expectRegistrationError(res, 401, 'invalid_token');
  });

  it('refuses a PUT that changes client_id or gives another secret', async () => {
    const { token } = await issueToken(t);
    const made = await (
      await postJson(
        t,
        REGISTER,
        { ...MCP_CLIENT, token_endpoint_auth_method: 'client_secret_basic' },
        bearer(token),
      )
    ).json();
    const uri = new URL(made.registration_client_uri).pathname;
    const auth = bearer(made.registration_access_token);
    const other = await registered();
    for (const client_id of [other.client_id, undefined]) {
      const res = await postJson(t, uri, { ...MCP_CLIENT, client_id }, auth, 'PUT');
      expect(await expectRegistrationError(res, 400, 'invalid_client_metadata')).toStartWith('client_id:');
    }
    const wrongSecret = await postJson(
      t,
      uri,
      {
        ...MCP_CLIENT,
        token_endpoint_auth_method: 'client_secret_basic',
        client_id: made.client_id,
        client_secret: 'ocs_wrong',
      },
      auth,
      'PUT',
    );
    expect(await expectRegistrationError(wrongSecret, 400, 'invalid_client_metadata')).toStartWith(
      'client_secret:',
    );
    // Nor can a PUT turn a confidential client public.
    const toPublic = await postJson(t, uri, { ...MCP_CLIENT, client_id: made.client_id }, auth, 'PUT');
    expect(await expectRegistrationError(toPublic, 400, 'invalid_client_metadata')).toStartWith(
      'token_endpoint_auth_method:',
    );
    const right = await postJson(
      t,
      uri,
      {
        ...MCP_CLIENT,
        token_endpoint_auth_method: 'client_secret_basic',
        client_id: made.client_id,
        client_secret: made.client_secret,
      },
      auth,
      'PUT',
    );
    await expectStatus(right, 200);
  });
});

describe('metadata that must not register, each error naming the member', () => {
  let token: string;
  beforeAll(async () => {
    token = (await issueToken(t, { uses: 100 })).token;
  });
  const cases: [string, Record<string, unknown>, string, string][] = [
    [
      'an http redirect URI off loopback',
      { redirect_uris: ['http://evil.example/cb'] },
      'invalid_redirect_uri',
      'redirect_uris',
    ],
    [
      'a redirect URI with a fragment',
      { redirect_uris: ['https://app.example/cb#x'] },
      'invalid_redirect_uri',
      'redirect_uris',
    ],
    [
      'authorization_code without a redirect URI',
      { redirect_uris: [] },
      'invalid_redirect_uri',
      'redirect_uris',
    ],
    ['response_types token', { response_types: ['token'] }, 'invalid_client_metadata', 'response_types'],
    [
      'response_types code without authorization_code',
      { grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
      'response_types',
    ],
    [
      'authorization_code without response_types code',
      { response_types: [] },
      'invalid_client_metadata',
      'response_types',
    ],
    ['an unknown grant type', { grant_types: ['password'] }, 'invalid_client_metadata', 'grant_types'],
    [
      'grant_types that are no array',
      { grant_types: 'authorization_code' },
      'invalid_client_metadata',
      'grant_types',
    ],
    [
      'an unknown auth method',
      { token_endpoint_auth_method: 'tls_client_auth' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    [
      'private_key_jwt without keys',
      { token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      'jwks_uri',
    ],
    ['a jwks_uri over http', { jwks_uri: 'http://keys.example/jwks' }, 'invalid_client_metadata', 'jwks_uri'],
    [
      'a private key in jwks',
      { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b', d: 'c' }] } },
      'invalid_client_metadata',
      'jwks',
    ],
    ['a scope with a quote', { scope: 'openid "x' }, 'invalid_client_metadata', 'scope'],
    ['a scope that is not a string', { scope: ['openid'] }, 'invalid_client_metadata', 'scope'],
    ['an empty client_name', { client_name: '' }, 'invalid_client_metadata', 'client_name'],
    ['a contact that is no address', { contacts: ['nobody'] }, 'invalid_client_metadata', 'contacts'],
    [
      'a logo_uri over http',
      { logo_uri: 'http://app.example/logo.png' },
      'invalid_client_metadata',
      'logo_uri',
    ],
  ];
  for (const [what, change, error, member] of cases)
    it(`refuses ${what}`, async () => {
      const res = await postJson(t, REGISTER, { ...MCP_CLIENT, ...change }, bearer(token));
      expect(await expectRegistrationError(res, 400, error)).toStartWith(`${member}`);
    });

  it('refuses a body that is not a JSON object', async () => {
    for (const raw of ['[1]', 'not json', '"text"']) {
      const res = await fetch(`${t.url}${REGISTER}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: raw,
      });
      await expectRegistrationError(res, 400, 'invalid_client_metadata');
    }
  });
});
