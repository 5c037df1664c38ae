import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  openLogin,
  postForm,
  REDIRECT,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';

let s: AuthorizeService;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
});
afterAll(() => s.stop());

const OTHER_REDIRECT = 'https://app.example/callback';

/** A login opened for the client (the page in the browser), its person, and the PKCE verifier. */
async function openFor(client: MadeClient, extra: Record<string, string> = {}) {
  const person = await s.person();
  const { url, verifier } = await authorizationUrl(as, client.client_id, extra);
  return { opened: await openLogin(url), person, verifier };
}

const patchClient = async (client: MadeClient, body: Record<string, unknown>) =>
  expectStatus(await s.call('PATCH', `/oauth2/clients/${client.client_id}`, { body }), 200);

/** The token payload's claims, unverified (the tests around it check the answer's status first). */
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

describe('a client changed by an administrator while a login is under way', () => {
  it('sends no code to a redirect URI removed meanwhile: an error page, no redirect', async () => {
    const client = await s.createClient({ redirect_uris: [REDIRECT, OTHER_REDIRECT] });
    const { opened, person } = await openFor(client);
    await patchClient(client, { redirect_uris: [OTHER_REDIRECT] });
    const res = await submitLogin(s.url, opened, person.handle.value, person.password);
    const html = await res.text();
    expect({ status: res.status, location: res.headers.get('location'), html }).toMatchObject({
      status: 400,
      location: null,
    });
    expect(html).toContain('redirect_uri was removed from the client');
  });

  it('sends nothing to the redirect URI of a client deleted meanwhile', async () => {
    const client = await s.createClient();
    const { opened, person } = await openFor(client);
    await expectStatus(await s.call('DELETE', `/oauth2/clients/${client.client_id}`), 204);
    const res = await submitLogin(s.url, opened, person.handle.value, person.password);
    const html = await res.text();
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({
      status: 400,
      location: null,
    });
    expect(html).toContain('client of this sign-in was removed');
  });

  it('answers unauthorized_client at the redirect URI when the client lost the authorization_code grant', async () => {
    const client = await s.createClient();
    const { opened, person } = await openFor(client);
    await patchClient(client, { grant_types: ['client_credentials'] });
    const res = await submitLogin(s.url, opened, person.handle.value, person.password);
    await expectStatus(res, 303);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('unauthorized_client');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('grants only the scopes the client still has: a removed openid gives no ID token', async () => {
    const client = await s.createClient();
    const { opened, person, verifier } = await openFor(client, { scope: 'openid email read write' });
    await patchClient(client, { scopes: ['email', 'read'] });
    const res = await submitLogin(s.url, opened, person.handle.value, person.password);
    await expectStatus(res, 303);
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    const tokens = await exchange(s, client, code, verifier);
    await expectStatus(tokens, 200);
    expect(tokens.json.scope).toBe('email read');
    expect(tokens.json.id_token).toBeUndefined();
    expect(claimsOf(String(tokens.json.access_token)).scope).toBe('email read');
  });

  it('refuses a code whose redirect URI was removed between the login and the exchange', async () => {
    const client = await s.createClient({ redirect_uris: [REDIRECT, OTHER_REDIRECT] });
    const { code, verifier } = await obtainCode(s, client);
    await patchClient(client, { redirect_uris: [OTHER_REDIRECT] });
    await expectOAuthError(
      await exchange(s, client, code, verifier),
      400,
      'invalid_grant',
      /no longer one of the client's redirect URIs/,
    );
  });

  it('narrows the scope of a code exchanged after a scope was removed', async () => {
    const client = await s.createClient();
    const { code, verifier } = await obtainCode(s, client, { scope: 'openid read write' });
    await patchClient(client, { scopes: ['openid', 'read'] });
    const tokens = await exchange(s, client, code, verifier);
    await expectStatus(tokens, 200);
    expect(tokens.json.scope).toBe('openid read');
    expect(typeof tokens.json.id_token).toBe('string');
  });
});

describe("the spec's code_challenge at the token endpoint", () => {
  const exchangeWith = (client: MadeClient, code: string, form: Record<string, string>) =>
    postForm(s, '/oauth2/tokens', client, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      ...form,
    });

  it('is taken as the PKCE verifier, as the spec names it', async () => {
    const client = await s.createClient();
    const { code, verifier } = await obtainCode(s, client);
    const res = await exchangeWith(client, code, { code_challenge: verifier });
    await expectStatus(res, 200);
    expect(typeof res.json.access_token).toBe('string');
  });

  it('must match the challenge as code_verifier must', async () => {
    const client = await s.createClient();
    const { code } = await obtainCode(s, client);
    await expectOAuthError(
      await exchangeWith(client, code, { code_challenge: oauth.generateRandomCodeVerifier() }),
      400,
      'invalid_grant',
      /does not match the code_challenge/,
    );
  });

  it('is refused with invalid_request when code_verifier is sent too with another value', async () => {
    const client = await s.createClient();
    const { code, verifier } = await obtainCode(s, client);
    await expectOAuthError(
      await exchangeWith(client, code, {
        code_verifier: verifier,
        code_challenge: oauth.generateRandomCodeVerifier(),
      }),
      400,
      'invalid_request',
      /differ/,
    );
  });
});
