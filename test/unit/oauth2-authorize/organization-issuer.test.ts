// Each organization's own issuer (core/tokens/issuers.ts): a client bound to it is discovered, signed in
// and served by openid-client as it would be by any multi-tenant provider; the deployment's issuer keeps
// working for every other client, and neither issuer passes for the other.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { createResourceVerifier } from '../../../plugins/oauth2/resource.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  loginByHttp,
  type MadeClient,
  postForm,
  REDIRECT,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
let orgIssuer: string;

beforeAll(async () => {
  s = await startAuthorizeService();
  orgIssuer = `${s.url}/oauth2/organizations/${s.org.id}`;
});
afterAll(() => s.stop());

/** openid-client's configuration of a client, discovered from `issuer`. */
const configure = (issuer: string, made: MadeClient) =>
  oidc.discovery(
    new URL(issuer),
    made.client_id,
    { client_secret: made.client_secret! },
    oidc.ClientSecretBasic(made.client_secret!),
    { execute: [oidc.allowInsecureRequests] },
  );

/** A sign-in by HTTP for a request openid-client builds; answers the callback and the checks. */
async function signIn(config: oidc.Configuration) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email read',
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const who = await s.person();
  const callback = await loginByHttp(s, url, who.handle.value, who.password);
  return { callback, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce } };
}

describe("an organization's own issuer", () => {
  it('serves its metadata by path insertion and by appending, with its own registration endpoint', async () => {
    for (const path of [
      `/.well-known/oauth-authorization-server/oauth2/organizations/${s.org.id}`,
      `/.well-known/openid-configuration/oauth2/organizations/${s.org.id}`,
      `/oauth2/organizations/${s.org.id}/.well-known/openid-configuration`,
    ]) {
      const res = await fetch(`${s.url}${path}`);
      await expectStatus(res, 200);
      const doc = (await res.json()) as Record<string, unknown>;
      expect(doc.issuer).toBe(orgIssuer);
      expect(doc.registration_endpoint).toBe(`${orgIssuer}/register`);
      expect(doc.token_endpoint).toBe(`${s.url}/oauth2/tokens`);
    }
    const deployment = (await (await fetch(`${s.url}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(deployment.issuer).toBe(s.url);
    expect(deployment.registration_endpoint).toBe(`${s.url}/oauth2/register`);
  });

  it('answers 404 for an organization that does not exist or an ID that is not one', async () => {
    for (const org of [crypto.randomUUID(), 'not-a-uuid'])
      await expectStatus(
        await fetch(`${s.url}/.well-known/oauth-authorization-server/oauth2/organizations/${org}`),
        404,
      );
  });

  it('signs a bound client in end to end with openid-client: iss of the answer, the ID token, the access token and refresh', async () => {
    const made = await s.createClient({ organization_issuer: true });
    const listed = await s.call('GET', `/oauth2/clients/${made.client_id}`);
    expect(listed.json.result).toMatchObject({ organization_issuer: true, issuer: orgIssuer });
    const config = await configure(orgIssuer, made);
    const { callback, checks } = await signIn(config);
    expect(callback.searchParams.get('iss')).toBe(orgIssuer);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { ...checks, idTokenExpected: true });
    expect(tokens.claims()?.iss).toBe(orgIssuer);
    expect(decodeJwt(tokens.access_token).iss).toBe(orgIssuer);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
    expect(info.sub).toBe(tokens.claims()!.sub);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(decodeJwt(refreshed.id_token!).iss).toBe(orgIssuer);
    const introspected = await oidc.tokenIntrospection(config, refreshed.refresh_token!);
    expect(introspected).toMatchObject({ active: true, iss: orgIssuer });
    const accessIntrospected = await oidc.tokenIntrospection(config, refreshed.access_token);
    expect(accessIntrospected).toMatchObject({ active: true, iss: orgIssuer });
  });

  it('keeps the deployment issuer for every other client, and openid-client refuses the mix-up either way', async () => {
    const deploymentClient = await s.createClient();
    const viaDeployment = await configure(s.url, deploymentClient);
    const plain = await signIn(viaDeployment);
    expect(plain.callback.searchParams.get('iss')).toBe(s.url);
    const tokens = await oidc.authorizationCodeGrant(viaDeployment, plain.callback, plain.checks);
    expect(tokens.claims()?.iss).toBe(s.url);

    // A relying party that discovered the organization's issuer for a client bound to the deployment's:
    // the answer's iss (RFC 9207) is not the issuer it talks to, and it stops there.
    const mixed = await configure(orgIssuer, deploymentClient);
    const wrong = await signIn(mixed);
    const refused = await oidc.authorizationCodeGrant(mixed, wrong.callback, wrong.checks).then(
      () => undefined,
      (e: { cause?: { message?: string } }) => e,
    );
    expect(refused?.cause?.message).toContain('unexpected "iss" (issuer) response parameter value');
  });

  it("does not take an organization's issuer for another organization's tokens", async () => {
    const other = await s.service.ctx.orgs.create('Other');
    const otherIssuer = `${s.url}/oauth2/organizations/${other.organization.id}`;
    const made = await s.createClient({ organization_issuer: true, grant_types: ['client_credentials'] });
    const granted = await postForm(s, '/oauth2/tokens', made, { grant_type: 'client_credentials' });
    await expectStatus(granted, 200);
    const token = String(granted.json.access_token);
    expect(decodeJwt(token).iss).toBe(orgIssuer);
    const request = () =>
      new Request('https://api.example/x', { headers: { authorization: `Bearer ${token}` } });
    // A resource server of this organization takes it, configured with either issuer.
    for (const issuer of [orgIssuer, s.url]) {
      const verifier = createResourceVerifier({ issuer, orgId: s.org.id });
      expect((await verifier.verify(request())).claims.iss).toBe(orgIssuer);
      expect(verifier.metadata().authorization_servers).toEqual([issuer]);
    }
    // One of the other organization refuses it.
    const theirs = createResourceVerifier({ issuer: otherIssuer, orgId: other.organization.id });
    await expect(theirs.verify(request())).rejects.toThrow();
  });

  it('refuses a client assertion addressed to another organization’s issuer', async () => {
    const { generateKeyPair, exportJWK, SignJWT } = await import('jose');
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const res = await s.call('POST', '/oauth2/clients', {
      body: {
        client_name: 'Keyed',
        grant_types: ['client_credentials'],
        scopes: ['read'],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [jwk] },
        organization_issuer: true,
      },
    });
    await expectStatus(res, 201);
    const clientId: string = res.json.result.client_id;
    const other = await s.service.ctx.orgs.create('Elsewhere');
    const assertion = (aud: string) =>
      new SignJWT({ jti: crypto.randomUUID() })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime('2m')
        .sign(privateKey);
    const grant = async (aud: string) =>
      fetch(`${s.url}/oauth2/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await assertion(aud),
        }),
      });
    await expectStatus(await grant(orgIssuer), 200);
    const refused = await grant(`${s.url}/oauth2/organizations/${other.organization.id}`);
    await expectStatus(refused, 401);
  });
});
