import { afterAll, beforeAll, describe, expect, it, spyOn } from 'bun:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
let as: oauth.AuthorizationServer;
const http = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  t = await startOAuth2Service();
  const issuer = new URL(t.url);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...http }),
  );
});
afterAll(() => t.stop());

/** Runs client_credentials through oauth4webapi and answers the processed token response. */
async function grant(clientId: string, auth: oauth.ClientAuth, parameters: Record<string, string> = {}) {
  const client = { client_id: clientId };
  const res = await oauth.clientCredentialsGrantRequest(as, client, auth, parameters, http);
  return oauth.processClientCredentialsResponse(as, client, res);
}

describe('client_credentials, driven by oauth4webapi from discovery on', () => {
  it('discovers the token, introspection and revocation endpoints and the auth methods', () => {
    expect(as.token_endpoint).toBe(`${t.url}/oauth2/tokens`);
    expect(as.introspection_endpoint).toBe(`${t.url}/oauth2/tokens/introspect`);
    expect(as.revocation_endpoint).toBe(`${t.url}/oauth2/tokens/revoke`);
    expect(as.grant_types_supported).toContain('client_credentials');
    expect(as.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    );
  });

  it('serves the same metadata at the RFC 8414 address, which oauth4webapi discovers too', async () => {
    const issuer = new URL(t.url);
    const rfc8414 = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...http }),
    );
    expect(rfc8414).toEqual(as);
  });

  it('grants an RFC 9068 access token by HTTP Basic that a resource server validates', async () => {
    const c = await t.createClient({ scopes: ['read', 'write'] });
    const result = await grant(c.client_id, oauth.ClientSecretBasic(c.client_secret!), { scope: 'read' });
    expect(result.token_type).toBe('bearer');
    expect(result.expires_in).toBe(3600);
    expect(result.scope).toBe('read');
    expect(result.refresh_token).toBeUndefined();
    expect(decodeProtectedHeader(result.access_token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });

    // A resource server validates it against the JWKS the discovery document names.
    const request = new Request('https://api.example/things', {
      headers: { authorization: `Bearer ${result.access_token}` },
    });
    const audience = `${t.url}/organizations/${t.org.id}`;
    const claims = await oauth.validateJwtAccessToken(as, request, audience, http);
    expect(claims).toMatchObject({
      iss: t.url,
      sub: c.client_id,
      aud: audience,
      client_id: c.client_id,
      oid: t.org.id,
      scope: 'read',
    });
    expect(claims.exp - claims.iat).toBe(3600);
  });

  it('never lets an access token pass for an identity token at /token/validate, though the keys are one', async () => {
    const c = await t.createClient({ scopes: ['read'] });
    const result = await grant(c.client_id, oauth.ClientSecretBasic(c.client_secret!));
    const res = await t.call('POST', '/token/validate', { body: { token: result.access_token } });
    await expectStatus(res, 200);
    expect(res.json.result).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'wrong_token_type',
    });
  });

  it('grants by client_secret_post, with every scope of the client when none is asked', async () => {
    const c = await t.createClient({ scopes: ['read', 'write'] });
    const result = await grant(c.client_id, oauth.ClientSecretPost(c.client_secret!));
    expect(result.scope).toBe('read write');
    expect(decodeJwt(result.access_token).scope).toBe('read write');
  });

  it('uses the access_token_duration of the client', async () => {
    const c = await t.createClient({ access_token_duration: 120 });
    const result = await grant(c.client_id, oauth.ClientSecretBasic(c.client_secret!));
    expect(result.expires_in).toBe(120);
    const claims = decodeJwt(result.access_token);
    expect(claims.exp! - claims.iat!).toBe(120);
  });

  it('answers with Cache-Control: no-store and Pragma: no-cache', async () => {
    const c = await t.createClient();
    const res = await oauth.clientCredentialsGrantRequest(
      as,
      { client_id: c.client_id },
      oauth.ClientSecretBasic(c.client_secret!),
      {},
      http,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(res.headers.get('content-type')).toStartWith('application/json');
  });

  it('answers a wrong Basic secret with a Basic challenge the library surfaces, and invalid_client', async () => {
    const c = await t.createClient();
    const refused = await grant(c.client_id, oauth.ClientSecretBasic('ocs_wrong')).catch((e) => e);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    await expectStatus({ status: refused.status }, 401);
    expect(refused.cause[0]).toMatchObject({ scheme: 'basic', parameters: { realm: 'oauth2' } });
    expect((await refused.response.json()).error).toBe('invalid_client');
  });

  it('answers a scope beyond the client with invalid_scope, which the library surfaces', async () => {
    const c = await t.createClient({ scopes: ['read'] });
    const refused = await grant(c.client_id, oauth.ClientSecretPost(c.client_secret!), {
      scope: 'read admin',
    }).catch((e) => e);
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect(refused.error).toBe('invalid_scope');
    await expectStatus({ status: refused.status }, 400);
  });
});

describe('client_credentials when the signature fails', () => {
  it('answers 500 server_error, and the next grant is signed', async () => {
    const c = await t.createClient({ scopes: ['read'] });
    const form = `grant_type=client_credentials&client_id=${c.client_id}&client_secret=${c.client_secret}`;
    // Warm: the client and the token key are cached, so the grant's only wait is its signature.
    await expectStatus(await t.post('/oauth2/tokens', form), 200);
    const subtleSign = spyOn(crypto.subtle, 'sign').mockImplementationOnce(() =>
      Promise.reject(new Error('the signing thread failed')),
    );
    try {
      const failed = await t.post('/oauth2/tokens', form);
      const text = await failed.text();
      expect({ status: failed.status, text }).toMatchObject({ status: 500 });
      expect(JSON.parse(text)).toMatchObject({ error: 'server_error' });
      expect(subtleSign).toHaveBeenCalledTimes(1);
      await expectStatus(await t.post('/oauth2/tokens', form), 200);
    } finally {
      subtleSign.mockRestore();
    }
  });
});
