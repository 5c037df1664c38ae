import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import { signIn } from '../../helpers/identity-service.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  loginByHttp,
  opts,
  REDIRECT,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
beforeAll(async () => {
  s = await startAuthorizeService();
});
afterAll(() => s.stop());

let n = 0;
/** A person with an email address and a username, so userinfo's scopes have something to answer. */
async function personWithEmail() {
  const username = `ada-${++n}`;
  const email = `ada.${n}@example.com`;
  const made = await s.call('POST', '/persons', {
    body: {
      handles: [
        { type: 'email_address', value: email },
        { type: 'username', value: username },
      ],
    },
  });
  await expectStatus(made, 201);
  const personId: string = made.json.result.person_id;
  const password = 'correct horse battery staple';
  await expectStatus(
    await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password } }),
    204,
  );
  return { personId, email, username, password };
}

describe('authorization_code with PKCE and refresh, driven by oauth4webapi from discovery', () => {
  it('signs a person in for a confidential client and answers access, refresh and ID tokens', async () => {
    const as = await discover(s);
    expect(as.authorization_endpoint).toBe(`${s.url}/oauth2/authorize`);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    const made = await s.createClient();
    const client: oauth.Client = { client_id: made.client_id };
    const auth = oauth.ClientSecretBasic(made.client_secret!);
    const person = await personWithEmail();

    const { url, verifier, state, nonce } = await authorizationUrl(as, made.client_id);
    // The hosted form takes any of the person's handles: here the email address, typed in upper case.
    const callback = await loginByHttp(s, url, person.email.toUpperCase(), person.password);
    expect(callback.searchParams.get('iss')).toBe(s.url);
    const params = oauth.validateAuthResponse(as, client, callback, state);

    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, opts),
      { expectedNonce: nonce, requireIdToken: true },
    );
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'openid email read', expires_in: 3600 });
    expect(tokens.refresh_token).toStartWith('isr_');
    const id = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(id).toMatchObject({
      iss: s.url,
      sub: person.personId,
      aud: made.client_id,
      azp: made.client_id,
      nonce,
    });
    expect(typeof id.auth_time).toBe('number');
    // The ID token is an identity token of the deployment's keys: it verifies against the JWKS.
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
    await jwtVerify(tokens.id_token!, jwks, { issuer: s.url, audience: made.client_id });
    const access = decodeJwt(tokens.access_token);
    expect(access).toMatchObject({
      sub: person.personId,
      client_id: made.client_id,
      oid: s.org.id,
      scope: 'openid email read',
    });
    expect(access.auth_time).toBe(id.auth_time);

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      person.personId,
      await oauth.userInfoRequest(as, client, tokens.access_token, opts),
    );
    // scope email but not username: the email address only.
    expect(info).toEqual({
      sub: person.personId,
      iss: s.url,
      aud: made.client_id,
      org_id: s.org.id,
      email: person.email,
      email_verified: false,
    });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, opts),
    );
    expect(refreshed.refresh_token).toStartWith('isr_');
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe('openid email read');
    const again = oauth.getValidatedIdTokenClaims(refreshed)!;
    expect(again).toMatchObject({ sub: person.personId, aud: made.client_id, auth_time: id.auth_time });
    expect(again.nonce).toBeUndefined();
    // And the rotated token refreshes in its turn.
    await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, opts),
    );
  });

  it('serves a public client that authenticates with client_id alone and PKCE', async () => {
    const as = await discover(s);
    const made = await s.createClient({ public: true, scopes: ['openid', 'read'] });
    expect(made.client_secret).toBeUndefined();
    const client: oauth.Client = { client_id: made.client_id, token_endpoint_auth_method: 'none' };
    const person = await s.person();
    const { url, verifier, state, nonce } = await authorizationUrl(as, made.client_id, {
      scope: 'openid read',
    });
    const params = oauth.validateAuthResponse(
      as,
      client,
      await loginByHttp(s, url, person.handle.value, person.password),
      state,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, REDIRECT, verifier, opts),
      { expectedNonce: nonce },
    );
    expect(tokens.refresh_token).toBeDefined();
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, opts),
    );
    expect(refreshed.access_token).toBeDefined();
  });

  it('answers no ID token without openid, and no refresh token to a client without the grant', async () => {
    const as = await discover(s);
    const made = await s.createClient({ grant_types: ['authorization_code'], scopes: ['read'] });
    const client: oauth.Client = { client_id: made.client_id };
    const person = await s.person();
    const { url, verifier, state } = await authorizationUrl(as, made.client_id, { scope: 'read' });
    const params = oauth.validateAuthResponse(
      as,
      client,
      await loginByHttp(s, url, person.handle.value, person.password),
      state,
    );
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(made.client_secret!),
      params,
      REDIRECT,
      verifier,
      opts,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.clone().json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    await oauth.processAuthorizationCodeResponse(as, client, res);
    // The hook decided the login, but no identity token was handed out: none is announced, and the
    // person's first identity token is still to come.
    expect(s.hook.seen.at(-1)).toMatchObject({ issuer: 'oauth2', personId: person.personId });
    await expectStatus(await signIn(s, person), 200);
    const minted = (await s.eventsNamed('TokenMinted_v1')).filter((e) => e.person_id === person.personId);
    expect(minted).toEqual([expect.objectContaining({ first_token: true, mint_token_api: false })]);
  });

  it('reports the login: the hook runs for issuer oauth2, then the authentication and token events', async () => {
    const as = await discover(s);
    const made = await s.createClient();
    const person = await s.person();
    s.hook.answer = () => ({ claims: { plan: 'pro' } });
    try {
      const { url, verifier, state } = await authorizationUrl(as, made.client_id);
      const client: oauth.Client = { client_id: made.client_id };
      const params = oauth.validateAuthResponse(
        as,
        client,
        await loginByHttp(s, url, person.handle.value, person.password),
        state,
      );
      const draft = s.hook.seen.at(-1)!;
      expect(draft.issuer).toBe('oauth2');
      expect(draft.content.authentications[0]).toMatchObject({
        method: 'password',
        handle: { type: 'username', value: person.handle.value },
      });
      const res = await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(made.client_secret!),
        params,
        REDIRECT,
        verifier,
        opts,
      );
      await expectStatus(res, 200);
      expect(decodeJwt((await res.json()).id_token)).toMatchObject({ plan: 'pro' });
    } finally {
      s.hook.answer = () => undefined;
    }
    const succeeded = (await s.eventsNamed('AuthenticationSucceeded_v1')).filter(
      (e) => e.person_id === person.personId,
    );
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]).toMatchObject({
      success_authn_method: 'password',
      authenticated_methods: ['password'],
    });
    const minted = (await s.eventsNamed('TokenMinted_v1')).filter((e) => e.person_id === person.personId);
    expect(minted).toHaveLength(1);
  });
});
