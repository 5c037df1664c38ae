import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as client from 'openid-client';
import { expectStatus } from '../../helpers/expect-status.ts';
import { CLIENTS, type OAuth2TestService, startOAuth2Service } from './fixture.ts';
import {
  bearer,
  issueToken,
  MCP_CLIENT,
  POLICY,
  postJson,
  setPolicy,
  TOKENS,
} from './registration-fixture.ts';

let t: OAuth2TestService;
let orgIssuer: string;
const insecure = { execute: [client.allowInsecureRequests] };

beforeAll(async () => {
  t = await startOAuth2Service();
  orgIssuer = `${t.url}/oauth2/organizations/${t.org.id}`;
});
afterAll(() => t.stop());

describe('initial access tokens, issued by an administrator', () => {
  it('issues a token shown once, with its expiry and uses, that the list never shows again', async () => {
    const made = await t.call('POST', TOKENS, { body: { expires_in: 600, uses: 3 } });
    await expectStatus(made, 201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const token = made.json.result;
    expect(token.token).toStartWith('oit_');
    expect(token).toMatchObject({ uses: 3, uses_left: 3 });
    expect(Date.parse(token.expires_at) - Date.parse(token.created_at)).toBe(600_000);

    const list = await t.call('GET', TOKENS);
    await expectStatus(list, 200);
    const listed = list.json.result.find((x: { id: string }) => x.id === token.id);
    expect(listed).toEqual({ ...token, token: undefined });
    expect(list.text).not.toContain(token.token);
  });

  it('defaults to one use for a day', async () => {
    const token = await issueToken(t);
    const listed = (await t.call('GET', TOKENS)).json.result.find((x: { id: string }) => x.id === token.id);
    expect(listed.uses).toBe(1);
    expect(Date.parse(listed.expires_at) - Date.parse(listed.created_at)).toBe(86_400_000);
  });

  it('refuses expires_in and uses out of their bounds, naming the member', async () => {
    for (const [body, member] of [
      [{ expires_in: 0 }, 'expires_in'],
      [{ expires_in: 31 * 86_400 }, 'expires_in'],
      [{ expires_in: 1.5 }, 'expires_in'],
      [{ uses: 1001 }, 'uses'],
      [{ uses: '2' }, 'uses'],
      [{ scope: 'x' }, 'scope'],
    ] as const) {
      const res = await t.call('POST', TOKENS, { body });
      await expectStatus(res, 400);
      expect(res.text).toContain(member);
    }
  });
});

describe('registration with an initial access token, driven by openid-client', () => {
  it("registers a confidential client at the deployment's issuer that then gets tokens", async () => {
    const { token } = await issueToken(t);
    const config = await client.dynamicClientRegistration(
      new URL(t.url),
      { client_name: 'Batch job', grant_types: ['client_credentials'], scope: 'read write' },
      undefined,
      { initialAccessToken: token, ...insecure },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_secret).toStartWith('ocs_');
    expect(metadata).toMatchObject({
      client_name: 'Batch job',
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'read write',
      client_secret_expires_at: 0,
      registration_client_uri: `${t.url}/oauth2/register/${metadata.client_id}`,
    });
    expect(metadata.registration_access_token).toStartWith('ort_');
    expect(metadata.client_id_issued_at).toBeNumber();

    client.allowInsecureRequests(config);
    const granted = await client.clientCredentialsGrant(config, { scope: 'read' });
    expect(granted.scope).toBe('read');

    // The administrator sees it: a third-party client of the deployment's issuer.
    const seen = await t.call('GET', `${CLIENTS}/${metadata.client_id}`);
    await expectStatus(seen, 200);
    expect(seen.json.result).toMatchObject({ first_party: false, organization_issuer: false, issuer: t.url });
  });

  it("registers at the organization's issuer with its token: the client carries that issuer", async () => {
    const { token } = await issueToken(t);
    const config = await client.dynamicClientRegistration(new URL(orgIssuer), MCP_CLIENT, undefined, {
      initialAccessToken: token,
      ...insecure,
    });
    expect(config.serverMetadata().issuer).toBe(orgIssuer);
    const { client_id } = config.clientMetadata();
    const seen = await t.call('GET', `${CLIENTS}/${client_id}`);
    expect(seen.json.result).toMatchObject({
      public: true,
      organization_issuer: true,
      issuer: orgIssuer,
      scopes: ['openid'],
      first_party: false,
    });
  });

  it('answers the registered metadata and ignores members it does not know, software_statement too', async () => {
    const { token } = await issueToken(t);
    const res = await postJson(
      t,
      '/oauth2/register',
      {
        ...MCP_CLIENT,
        client_uri: 'https://agent.example',
        logo_uri: 'https://agent.example/logo.png',
        contacts: ['ops@agent.example'],
        software_id: 'agent-cli',
        software_version: '1.2.3',
        post_logout_redirect_uris: ['http://127.0.0.1:33418/bye'],
        scope: 'openid email',
        software_statement: 'eyJhbGciOiJub25lIn0.e30.',
        first_party: true,
        tos_uri: null,
        x_vendor_extension: { anything: 1 },
      },
      bearer(token),
    );
    await expectStatus(res, 201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(body).toMatchObject({
      client_name: 'Agent CLI',
      redirect_uris: MCP_CLIENT.redirect_uris,
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: 'openid email',
      client_uri: 'https://agent.example',
      logo_uri: 'https://agent.example/logo.png',
      contacts: ['ops@agent.example'],
      software_id: 'agent-cli',
      software_version: '1.2.3',
      post_logout_redirect_uris: ['http://127.0.0.1:33418/bye'],
    });
    expect(body.client_secret).toBeUndefined();
    expect(body.client_secret_expires_at).toBeUndefined();
    expect(body.software_statement).toBeUndefined();
    expect(body.x_vendor_extension).toBeUndefined();
    const seen = await t.call('GET', `${CLIENTS}/${body.client_id}`);
    expect(seen.json.result.first_party).toBe(false);
  });

  it('counts a use down: a one-use token registers one client', async () => {
    const { id, token } = await issueToken(t, { uses: 2 });
    await expectStatus(await postJson(t, '/oauth2/register', MCP_CLIENT, bearer(token)), 201);
    const listed = (await t.call('GET', TOKENS)).json.result.find((x: { id: string }) => x.id === id);
    expect(listed).toMatchObject({ uses: 2, uses_left: 1 });
  });
});

describe('open registration at an organization issuer', () => {
  it('registers a public client without a token once the organization allows it, as MCP clients do', async () => {
    const policy = await setPolicy(t, { open_registration: true, allowed_scopes: ['openid', 'email'] });
    expect(policy).toMatchObject({
      open_registration: true,
      max_open_clients: 100,
      per_address_per_hour: 10,
      allowed_scopes: ['openid', 'email'],
    });
    const config = await client.dynamicClientRegistration(
      new URL(orgIssuer),
      { ...MCP_CLIENT, scope: 'openid email phone' },
      client.None(),
      insecure,
    );
    const metadata = config.clientMetadata();
    // Scopes the administrator did not allow are dropped; the answer says what the client got.
    expect(metadata.scope).toBe('openid email');
    expect(metadata.token_endpoint_auth_method).toBe('none');
    expect(metadata.client_secret).toBeUndefined();

    // The authorization code flow with PKCE is the next step: the request URL is built from discovery.
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: MCP_CLIENT.redirect_uris[0]!,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect(url.href).toStartWith(`${t.url}/oauth2/authorize?`);
    expect(url.searchParams.get('client_id')).toBe(metadata.client_id);

    const seen = await t.call('GET', `${CLIENTS}/${metadata.client_id}`);
    expect(seen.json.result).toMatchObject({ public: true, first_party: false, organization_issuer: true });
    const counted = await t.call('GET', POLICY);
    expect(counted.json.result.open_clients).toBeGreaterThanOrEqual(1);
  });

  it('gives a client that asks for no scope the allowed scopes', async () => {
    const res = await postJson(t, `/oauth2/organizations/${t.org.id}/register`, MCP_CLIENT);
    await expectStatus(res, 201);
    expect((await res.json()).scope).toBe('openid email');
  });

  it('answers a CORS preflight, so a browser-based client can register', async () => {
    const res = await fetch(`${t.url}/oauth2/organizations/${t.org.id}/register`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://inspector.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    await expectStatus(res, 204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toContain('content-type');
  });
});

describe('RFC 7592 client configuration', () => {
  it('reads, replaces and deletes a registered client with its registration access token', async () => {
    const { token } = await issueToken(t);
    const made = await (
      await postJson(
        t,
        '/oauth2/register',
        { ...MCP_CLIENT, client_uri: 'https://agent.example', scope: 'openid email' },
        bearer(token),
      )
    ).json();
    const uri = new URL(made.registration_client_uri).pathname;
    const auth = bearer(made.registration_access_token);

    const read = await fetch(`${t.url}${uri}`, { headers: auth });
    await expectStatus(read, 200);
    const info = await read.json();
    expect(info).toEqual({ ...made });

    // A PUT replaces the metadata: client_uri, left out, is gone; the name changes.
    const replaced = await postJson(
      t,
      uri,
      { client_id: made.client_id, ...MCP_CLIENT, client_name: 'Agent CLI 2', scope: 'openid' },
      auth,
      'PUT',
    );
    await expectStatus(replaced, 200);
    const after = await replaced.json();
    expect(after).toMatchObject({ client_name: 'Agent CLI 2', scope: 'openid' });
    expect(after.client_uri).toBeUndefined();
    const seen = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    expect(seen.json.result).toMatchObject({ client_name: 'Agent CLI 2', scopes: ['openid'] });
    expect(seen.json.result.client_uri).toBeUndefined();

    const deleted = await fetch(`${t.url}${uri}`, { method: 'DELETE', headers: auth });
    await expectStatus(deleted, 204);
    await expectStatus(await t.call('GET', `${CLIENTS}/${made.client_id}`), 404);
  });
});
