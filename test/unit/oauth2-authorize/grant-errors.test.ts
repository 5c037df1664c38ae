import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  openLogin,
  postForm,
  REDIRECT,
  refresh,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';

const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  client = await s.createClient();
});
afterAll(() => s.stop());

/** A code exchanged: the token response. */
async function tokensFor(c = client, extra: Record<string, string> = {}) {
  const { code, verifier } = await obtainCode(s, c, extra);
  const res = await exchange(s, c, code, verifier);
  await expectStatus(res, 200);
  return {
    code,
    verifier,
    tokens: res.json as { access_token: string; refresh_token: string; scope: string },
  };
}

const introspect = async (token: string, as = client) =>
  (await postForm(s, '/oauth2/tokens/introspect', as, { token })).json;

describe('the authorization_code grant refuses, each with its exact error', () => {
  it('a replayed code with invalid_grant, revoking the tokens the first exchange issued', async () => {
    const { code, verifier, tokens } = await tokensFor();
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true });
    expect(await introspect(tokens.refresh_token)).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });
    await expectOAuthError(
      await exchange(s, client, code, verifier),
      400,
      'invalid_grant',
      /already been used/,
    );
    await expectOAuthError(await refresh(s, client, tokens.refresh_token), 400, 'invalid_grant', /revoked/);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    const userinfo = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectStatus(userinfo, 401);
  });

  it('a redirect_uri other than the authorization request had', async () => {
    const other = 'http://127.0.0.1:9/other';
    const c = await s.createClient({ redirect_uris: [REDIRECT, other] });
    const { code, verifier } = await obtainCode(s, c);
    await expectOAuthError(
      await exchange(s, c, code, verifier, other),
      400,
      'invalid_grant',
      /redirect_uri does not match/,
    );
  });

  it('a code_verifier that does not match the challenge', async () => {
    const { code } = await obtainCode(s, client);
    const wrong = oauth.generateRandomCodeVerifier();
    await expectOAuthError(
      await exchange(s, client, code, wrong),
      400,
      'invalid_grant',
      /code_verifier does not match/,
    );
    // The code was burnt by the failed attempt: the right verifier comes too late.
  });

  it('a missing code_verifier when the request had a challenge', async () => {
    const { code } = await obtainCode(s, client);
    await expectOAuthError(
      await exchange(s, client, code, undefined),
      400,
      'invalid_grant',
      /code_verifier is required/,
    );
  });

  it('a code_verifier for a code issued without a challenge (a downgrade)', async () => {
    const { code } = await obtainWithoutPkce();
    const verifier = oauth.generateRandomCodeVerifier();
    await expectOAuthError(
      await exchange(s, client, code, verifier),
      400,
      'invalid_grant',
      /no code_challenge/,
    );
  });

  it('a malformed code_verifier with invalid_request', async () => {
    const { code } = await obtainCode(s, client);
    await expectOAuthError(
      await exchange(s, client, code, 'short'),
      400,
      'invalid_request',
      /code_verifier must be 43 to 128/,
    );
  });

  it("another client's code", async () => {
    const other = await s.createClient();
    const { code, verifier } = await obtainCode(s, client);
    await expectOAuthError(
      await exchange(s, other, code, verifier),
      400,
      'invalid_grant',
      /issued to another client/,
    );
  });

  it('a code past its 60 seconds', async () => {
    const { code, verifier } = await obtainCode(s, client);
    clock.advance(61_000);
    await expectOAuthError(await exchange(s, client, code, verifier), 400, 'invalid_grant', /expired/);
  });

  it('a code never issued, and a missing one', async () => {
    await expectOAuthError(
      await exchange(s, client, 'made-up', undefined),
      400,
      'invalid_grant',
      /not a valid/,
    );
    const res = await postForm(s, '/oauth2/tokens', client, {
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
    });
    await expectOAuthError(res, 400, 'invalid_request', /code is required/);
  });
});

/** A code for `client` requested without PKCE (confidential clients may). */
async function obtainWithoutPkce() {
  const q = new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'read',
    state: 'x',
  });
  const person = await s.person();
  const opened = await openLogin(`${s.url}/oauth2/authorize?${q}`);
  const res = await submitLogin(s.url, opened, person.handle.value, person.password);
  await expectStatus(res, 303);
  return { code: new URL(res.headers.get('location')!).searchParams.get('code')! };
}

describe('the refresh_token grant', () => {
  it('rotates: the new token works, the spent one past the grace window revokes the family', async () => {
    const { tokens } = await tokensFor();
    const first = await refresh(s, client, tokens.refresh_token);
    await expectStatus(first, 200);
    const next = String(first.json.refresh_token);
    expect(next).not.toBe(tokens.refresh_token);
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    clock.advance(11_000);
    await expectOAuthError(
      await refresh(s, client, tokens.refresh_token),
      400,
      'invalid_grant',
      /already been used/,
    );
    // The whole family is revoked: the newest token and the access token issued with it too.
    await expectOAuthError(await refresh(s, client, next), 400, 'invalid_grant', /revoked/);
    expect(await introspect(String(first.json.access_token))).toEqual({ active: false });
  });

  it('lets two concurrent refreshes of one token both succeed within the grace window', async () => {
    const { tokens } = await tokensFor();
    const [a, b] = await Promise.all([
      refresh(s, client, tokens.refresh_token),
      refresh(s, client, tokens.refresh_token),
    ]);
    await expectStatus(a, 200);
    await expectStatus(b, 200);
    expect(a.json.refresh_token).not.toBe(b.json.refresh_token);
    // Both successors work, and a reuse within the window (a lost response retried) still succeeds.
    clock.advance(5_000);
    await expectStatus(await refresh(s, client, tokens.refresh_token), 200);
    await expectStatus(await refresh(s, client, String(a.json.refresh_token)), 200);
    await expectStatus(await refresh(s, client, String(b.json.refresh_token)), 200);
  });

  it('with OAUTH2_REFRESH_GRACE_SECONDS=0, any second use revokes the family', async () => {
    const strict = await startAuthorizeService({ env: { OAUTH2_REFRESH_GRACE_SECONDS: '0' }, clock });
    try {
      const c = await strict.createClient();
      const { code, verifier } = await obtainCode(strict, c);
      const tokens = (await exchange(strict, c, code, verifier)).json;
      const token = String(tokens.refresh_token);
      await expectStatus(await refresh(strict, c, token), 200);
      clock.advance(1);
      await expectOAuthError(await refresh(strict, c, token), 400, 'invalid_grant', /already been used/);
    } finally {
      await strict.stop();
    }
  });

  it('narrows the scope on request and refuses to widen it', async () => {
    const { tokens } = await tokensFor(client, { scope: 'openid read' });
    const narrowed = await refresh(s, client, tokens.refresh_token, 'read');
    await expectStatus(narrowed, 200);
    expect(narrowed.json.scope).toBe('read');
    expect(narrowed.json.id_token).toBeUndefined();
    // The new refresh token keeps the original grant: openid may be asked for again.
    const back = await refresh(s, client, String(narrowed.json.refresh_token), 'openid read');
    await expectStatus(back, 200);
    expect(back.json.scope).toBe('openid read');
    await expectOAuthError(
      await refresh(s, client, String(back.json.refresh_token), 'openid read write'),
      400,
      'invalid_scope',
      /write was not granted/,
    );
  });

  it("refuses another client's refresh token, an unknown one and an expired one", async () => {
    const { tokens } = await tokensFor();
    const other = await s.createClient();
    await expectOAuthError(
      await refresh(s, other, tokens.refresh_token),
      400,
      'invalid_grant',
      /another client/,
    );
    await expectOAuthError(await refresh(s, client, 'isr_made-up'), 400, 'invalid_grant', /not a valid/);
    clock.advance(864_001_000);
    await expectOAuthError(await refresh(s, client, tokens.refresh_token), 400, 'invalid_grant', /expired/);
  });

  it('stops when the person is disabled', async () => {
    const person = await s.person();
    const { code, verifier } = await obtainCode(s, client, {}, person);
    const tokens = (await exchange(s, client, code, verifier)).json;
    await expectStatus(
      await s.call('PATCH', `/persons/${person.personId}`, { body: { active: false } }),
      200,
    );
    await expectOAuthError(
      await refresh(s, client, String(tokens.refresh_token)),
      400,
      'invalid_grant',
      /disabled/,
    );
  });
});

describe('introspection and revocation of refresh tokens', () => {
  it('revoking a refresh token revokes its family and the access token issued with it', async () => {
    const { tokens } = await tokensFor();
    const res = await postForm(s, '/oauth2/tokens/revoke', client, { token: tokens.refresh_token });
    await expectStatus(res, 200);
    expect(await introspect(tokens.refresh_token)).toEqual({ active: false });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await expectOAuthError(await refresh(s, client, tokens.refresh_token), 400, 'invalid_grant', /revoked/);
  });

  it("refuses to revoke another client's token and keeps organizations apart", async () => {
    const { tokens } = await tokensFor();
    const sibling = await s.createClient();
    await expectOAuthError(
      await postForm(s, '/oauth2/tokens/revoke', sibling, { token: tokens.refresh_token }),
      400,
      'unauthorized_client',
    );
    const elsewhere = await s.service.ctx.orgs.create('Other');
    const foreign = await s.createClient({}, { orgId: elsewhere.organization.id, key: elsewhere.apiKey });
    expect(await introspect(tokens.refresh_token, foreign)).toEqual({ active: false });
    await expectStatus(
      await postForm(s, '/oauth2/tokens/revoke', foreign, { token: tokens.refresh_token }),
      200,
    );
    expect(await introspect(tokens.refresh_token)).toMatchObject({ active: true, sub: expect.any(String) });
  });
});
