import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  opts,
  postForm,
  REDIRECT,
  refresh,
  startAuthorizeService,
} from './fixture.ts';

// RFC 8707 resource indicators through the authorization code flow: `resource` at the authorization
// endpoint sets the aud of the grant's access tokens, which the exchange and every refresh keep.

const API = 'https://api.acme.example/v1';
const OTHER_API = 'https://billing.acme.example/';

let s: AuthorizeService;
let as: oauth.AuthorizationServer;
let client: MadeClient;
let resourceServer: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
  client = await s.createClient({ resources: [API, OTHER_API] });
  resourceServer = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
});
afterAll(() => s.stop());

const ownAudience = () => `${s.url}/organizations/${s.org.id}`;

/** Whether a resource server of `audience` takes the token (RFC 9068 through oauth4webapi). */
const validFor = (token: string, audience: string) =>
  oauth
    .validateJwtAccessToken(
      as,
      new Request('https://api.acme.example/v1/things', { headers: { authorization: `Bearer ${token}` } }),
      audience,
      opts,
    )
    .then(
      () => true,
      () => false,
    );

async function tokensFor(extra: Record<string, string>, tokenParams: Record<string, string> = {}) {
  const { code, verifier } = await obtainCode(s, client, { scope: 'openid email', ...extra });
  return postForm(s, '/oauth2/tokens', client, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    ...tokenParams,
  });
}

const introspect = (token: string) => postForm(s, '/oauth2/tokens/introspect', resourceServer, { token });
const userinfo = (token: string) =>
  fetch(`${s.url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });

describe('resource at the authorization endpoint', () => {
  it('sets the aud of the access tokens of the grant, refreshes included', async () => {
    const res = await tokensFor({ resource: API });
    await expectStatus(res, 200);
    const { access_token, refresh_token, id_token } = res.json as Record<string, string>;
    expect(decodeJwt(access_token!).aud).toBe(API);
    expect(await validFor(access_token!, API)).toBe(true);
    expect(await validFor(access_token!, ownAudience())).toBe(false);
    // The ID token is for the client, whatever the resource.
    expect(decodeJwt(id_token!).aud).toBe(client.client_id);
    const introspected = await introspect(access_token!);
    expect(introspected.json).toMatchObject({ active: true, aud: API });
    expect((await introspect(refresh_token!)).json).toMatchObject({ active: true, aud: API });

    const refreshed = await refresh(s, client, refresh_token!);
    await expectStatus(refreshed, 200);
    expect(decodeJwt(refreshed.json.access_token as string).aud).toBe(API);
    // Named again, the same resource is kept.
    const again = await postForm(s, '/oauth2/tokens', client, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.json.refresh_token as string,
      resource: API,
    });
    await expectStatus(again, 200);
    expect(decodeJwt(again.json.access_token as string).aud).toBe(API);
  });

  it('is refused with invalid_target at the redirect URI when the client does not list it', async () => {
    for (const resource of ['https://api.evil.example/', `${s.url}/organizations/${crypto.randomUUID()}`]) {
      const { url, state } = await authorizationUrl(as, client.client_id, { resource });
      const res = await fetch(url, { redirect: 'manual' });
      await expectStatus(res, 302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('invalid_target');
      expect(location.searchParams.get('error_description')).toContain(JSON.stringify(resource));
      expect(location.searchParams.get('state')).toBe(state);
    }
  });

  it('is refused with invalid_target when given twice', async () => {
    const { url } = await authorizationUrl(as, client.client_id, { resource: API });
    url.searchParams.append('resource', OTHER_API);
    const res = await fetch(url, { redirect: 'manual' });
    await expectStatus(res, 302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_target');
    expect(location.searchParams.get('error_description')).toContain('more than once');
  });

  it("is the organization's own audience without one, which userinfo takes", async () => {
    const res = await tokensFor({});
    await expectStatus(res, 200);
    const token = res.json.access_token as string;
    expect(decodeJwt(token).aud).toBe(ownAudience());
    await expectStatus(await userinfo(token), 200);
  });

  it("makes a token userinfo refuses: it is the resource's, not the organization's", async () => {
    const res = await tokensFor({ resource: API });
    await expectStatus(res, 200);
    const refused = await userinfo(res.json.access_token as string);
    await expectStatus(refused, 401);
    expect(refused.headers.get('www-authenticate')).toContain('another resource');
  });
});

describe('access tokens issued before audiences were per organization', () => {
  it('(aud the public base URL) are still taken by userinfo and introspection until they expire', async () => {
    const res = await tokensFor({});
    await expectStatus(res, 200);
    const claims = decodeJwt(res.json.access_token as string);
    const legacy = await s.service.ctx.signer.sign(
      TOKEN_KEYS_OWNER,
      { ...claims, aud: s.url, jti: crypto.randomUUID() },
      { typ: 'at+jwt' },
    );
    await expectStatus(await userinfo(legacy), 200);
    expect((await introspect(legacy)).json).toMatchObject({ active: true, aud: s.url });
  });
});

describe('resource at the token endpoint, within the grant', () => {
  it("refuses the exchange's resource when it is not the authorization request's", async () => {
    await expectOAuthError(
      await tokensFor({ resource: API }, { resource: OTHER_API }),
      400,
      'invalid_target',
    );
    await expectOAuthError(
      await tokensFor({}, { resource: API }),
      400,
      'invalid_target',
      /not the one this grant is for/,
    );
    const same = await tokensFor({ resource: API }, { resource: API });
    await expectStatus(same, 200);
    expect(decodeJwt(same.json.access_token as string).aud).toBe(API);
  });

  it('refuses a refresh that names another resource, and the refresh token stays good', async () => {
    const res = await tokensFor({ resource: API });
    await expectStatus(res, 200);
    const token = res.json.refresh_token as string;
    const widened = await postForm(s, '/oauth2/tokens', client, {
      grant_type: 'refresh_token',
      refresh_token: token,
      resource: OTHER_API,
    });
    await expectOAuthError(widened, 400, 'invalid_target', /never change it/);
    await expectStatus(await refresh(s, client, token), 200);
  });

  it('refuses a resource the client no longer lists, at the exchange and on refresh', async () => {
    const changing = await s.createClient({ resources: [API] });
    const { code, verifier } = await obtainCode(s, changing, { scope: 'openid', resource: API });
    const first = await obtainCode(s, changing, { scope: 'openid', resource: API });
    const granted = await exchange(s, changing, first.code, first.verifier);
    await expectStatus(granted, 200);
    await expectStatus(
      await s.call('PATCH', `/oauth2/clients/${changing.client_id}`, { body: { resources: [] } }),
      200,
    );
    await expectOAuthError(await exchange(s, changing, code, verifier), 400, 'invalid_target', /no longer/);
    await expectOAuthError(
      await refresh(s, changing, granted.json.refresh_token as string),
      400,
      'invalid_target',
      /no longer/,
    );
  });
});

describe('resource at the mint API', () => {
  it('sets the aud when the client lists it, and is a 400 naming it when not', async () => {
    const person = await s.person();
    const minted = await s.call('POST', '/oauth2/tokens/mint', {
      body: { person_id: person.personId, client_id: client.client_id, resource: API },
    });
    await expectStatus(minted, 200);
    expect(decodeJwt(minted.json.result.access_token).aud).toBe(API);
    const refused = await s.call('POST', '/oauth2/tokens/mint', {
      body: {
        person_id: person.personId,
        client_id: client.client_id,
        resource: 'https://api.evil.example/',
      },
    });
    await expectStatus(refused, 400);
    expect(refused.json.errors[0].message).toContain('resource: resource "https://api.evil.example/"');
  });
});
