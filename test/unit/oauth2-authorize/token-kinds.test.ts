import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import { sdk } from '../../../plugins/sdk/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  exchange,
  type MadeClient,
  obtainCode,
  postForm,
  startAuthorizeService,
} from './fixture.ts';

// Identity tokens, OpenID Connect ID tokens and RFC 9068 access tokens share the deployment's keys and
// issuer: each place that takes a token takes its own kind only.

let s: AuthorizeService;
let client: MadeClient;
let other: CallOptions;
beforeAll(async () => {
  s = await startAuthorizeService({ plugins: [sdk()] });
  client = await s.createClient();
  const made = await s.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
});
afterAll(() => s.stop());

/** An ID token and an access token from a real code flow (hosted login, then the token endpoint). */
async function oauthTokens() {
  const { code, verifier } = await obtainCode(s, client, { scope: 'openid email' });
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return res.json as { access_token: string; id_token: string };
}

async function identityToken(as: CallOptions = {}) {
  const person = await s.person(as);
  const minted = await s.call('POST', `/persons/${person.personId}/mint-token`, { ...as, body: {} });
  await expectStatus(minted, 201);
  return { personId: person.personId, token: minted.json.result as string };
}

const validate = async (token: string, as: CallOptions = {}) => {
  const res = await s.call('POST', '/token/validate', { ...as, body: { token } });
  await expectStatus(res, 200);
  return res.json.result;
};
const sdkEvents = (token: string) =>
  s.call('POST', '/sdk/events', {
    key: null,
    body: [{ event_name: 'ServiceSDKLoaded_v1' }],
    headers: { authorization: `Bearer ${token}` },
  });
const logout = (token: string) =>
  s.call('POST', '/logout', { key: null, headers: { authorization: `Bearer ${token}` } });
const userinfo = (token: string) =>
  fetch(`${s.url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${token}` } });

const wrongType = {
  valid: false,
  invalidity_reason: 'invalid_token_content',
  invalidity_detail: 'wrong_token_type',
};

describe('identity tokens', () => {
  it('carry aud, their organization, as the spec says', async () => {
    const { token } = await identityToken();
    expect(decodeJwt(token)).toMatchObject({ aud: s.org.id, oid: s.org.id });
  });

  it('validate for their own organization only', async () => {
    const { token } = await identityToken();
    expect((await validate(token)).valid).toBe(true);
    expect(await validate(token, other)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'wrong_organization',
    });
    await expectStatus(await sdkEvents(token), 202);
  });

  it('are refused by userinfo and inactive at introspection', async () => {
    const { token } = await identityToken();
    const res = await userinfo(token);
    await expectStatus(res, 401);
    expect(res.headers.get('www-authenticate')).toContain('invalid_token');
    const confidential = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
    const introspected = await postForm(s, '/oauth2/tokens/introspect', confidential, { token });
    await expectStatus(introspected, 200);
    expect(introspected.json).toEqual({ active: false });
  });

  it('issued before they carried aud still validate', async () => {
    const { personId, token } = await identityToken();
    const { aud, ...claims } = decodeJwt(token);
    expect(aud).toBe(s.org.id);
    const legacy = await s.service.ctx.signer.sign(TOKEN_KEYS_OWNER, { ...claims, jti: crypto.randomUUID() });
    expect(decodeJwt(legacy)).not.toHaveProperty('aud');
    expect((await validate(legacy)).valid).toBe(true);
    await expectStatus(await sdkEvents(legacy), 202);
    expect(decodeJwt(legacy).person_id).toBe(personId);
  });
});

describe('an ID token (aud the client) is not an identity token', () => {
  it('is refused by POST /token/validate and POST /token/revoke', async () => {
    const { id_token } = await oauthTokens();
    expect(decodeJwt(id_token)).toMatchObject({ aud: client.client_id, oid: s.org.id });
    expect(await validate(id_token)).toEqual(wrongType);
    const revoked = await s.call('POST', '/token/revoke', { body: { token: id_token } });
    await expectStatus(revoked, 400);
    expect(revoked.text).toContain('wrong_token_type');
  });

  it('is refused as a bearer token by the SDK routes', async () => {
    const { id_token } = await oauthTokens();
    for (const res of [await sdkEvents(id_token), await logout(id_token)]) {
      await expectStatus(res, 401);
      expect(res.text).toContain('(wrong_token_type)');
      expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });

  it('is refused by userinfo and inactive at introspection', async () => {
    const { id_token } = await oauthTokens();
    await expectStatus(await userinfo(id_token), 401);
    const confidential = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
    const introspected = await postForm(s, '/oauth2/tokens/introspect', confidential, { token: id_token });
    await expectStatus(introspected, 200);
    expect(introspected.json).toEqual({ active: false });
  });
});

describe('an access token (typ at+jwt) is not an identity token', () => {
  it('is refused by POST /token/validate and by the SDK routes', async () => {
    const { access_token } = await oauthTokens();
    expect(await validate(access_token)).toEqual(wrongType);
    for (const res of [await sdkEvents(access_token), await logout(access_token)]) {
      await expectStatus(res, 401);
      expect(res.text).toContain('(wrong_token_type)');
    }
    // And it is what userinfo takes.
    await expectStatus(await userinfo(access_token), 200);
  });
});
