import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  postForm,
  refresh,
  startAuthorizeService,
} from './fixture.ts';

let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
});
afterAll(() => s.stop());

const userinfo = (authorization?: string, method = 'GET') =>
  fetch(`${s.url}/oauth2/userinfo`, { method, headers: authorization ? { authorization } : {} });

async function tokensFor(scope: string, person?: Awaited<ReturnType<AuthorizeService['person']>>) {
  const { code, verifier } = await obtainCode(s, client, { scope }, person);
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return res.json as { access_token: string; refresh_token: string };
}

describe('GET and POST /oauth2/userinfo', () => {
  it("answers the person's username with scope username, by GET and by POST", async () => {
    const person = await s.person();
    const { access_token } = await tokensFor('openid username', person);
    for (const method of ['GET', 'POST']) {
      const res = await userinfo(`Bearer ${access_token}`, method);
      await expectStatus(res, 200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.json()).toEqual({
        sub: person.personId,
        iss: s.url,
        aud: client.client_id,
        org_id: s.org.id,
        username: person.handle.value,
      });
    }
  });

  it("reports email_verified and phone_number_verified as each handle's verified flag", async () => {
    const withPhone = await s.createClient({ scopes: ['openid', 'email', 'phone'] });
    for (const [name, verified] of [
      ['vera', true],
      ['nick', false],
    ] as const) {
      const made = await s.call('POST', '/persons', {
        body: {
          handles: [
            { type: 'username', value: `${name}-userinfo` },
            { type: 'email_address', value: `${name}@userinfo.example`, verified },
            { type: 'phone_number', value: verified ? '+4915112345678' : '+4915187654321', verified },
          ],
        },
      });
      await expectStatus(made, 201);
      const personId: string = made.json.result.person_id;
      const password = `a passphrase for ${name}`;
      await expectStatus(
        await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password } }),
        204,
      );
      const { code, verifier } = await obtainCode(
        s,
        withPhone,
        { scope: 'openid email phone' },
        {
          handle: { value: `${name}-userinfo` },
          password,
        },
      );
      const tokens = await exchange(s, withPhone, code, verifier);
      await expectStatus(tokens, 200);
      const res = await userinfo(`Bearer ${tokens.json.access_token}`);
      await expectStatus(res, 200);
      expect(await res.json()).toMatchObject({
        sub: personId,
        email: `${name}@userinfo.example`,
        email_verified: verified,
        phone_number: verified ? '+4915112345678' : '+4915187654321',
        phone_number_verified: verified,
      });
    }
  });

  it('takes the token as the access_token field of a POSTed form (RFC 6750 2.2), one way only', async () => {
    const person = await s.person();
    const { access_token } = await tokensFor('openid username', person);
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${s.url}/oauth2/userinfo`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    const res = await post(new URLSearchParams({ access_token }).toString());
    await expectStatus(res, 200);
    expect(await res.json()).toMatchObject({ sub: person.personId, username: person.handle.value });
    // RFC 6750 2: never two methods in one request, nor the field twice.
    for (const [body, headers] of [
      [`access_token=${access_token}`, { authorization: `Bearer ${access_token}` }],
      [`access_token=${access_token}&access_token=${access_token}`, {}],
      ['access_token=not%20one%20token', {}],
    ] as const) {
      const refused = await post(body, headers);
      await expectStatus(refused, 400);
      expect(refused.headers.get('www-authenticate')).toStartWith('Bearer error="invalid_request"');
    }
    // A form without the field, and a GET, still read the header alone.
    await expectStatus(await post('other=1', { authorization: `Bearer ${access_token}` }), 200);
    await expectStatus(await post(`access_token=not-valid`), 401);
  });

  it('answers 401 with a bare Bearer challenge, no error code, to a request without credentials', async () => {
    // RFC 6750 3.1: no authentication information (none, or another scheme) gets no error code.
    for (const header of [undefined, 'Basic abc']) {
      const res = await userinfo(header);
      await expectStatus(res, 401);
      expect({ header, challenge: res.headers.get('www-authenticate') }).toEqual({
        header,
        challenge: 'Bearer',
      });
    }
  });

  it('answers 401 invalid_token to a bearer token that is present but not valid', async () => {
    const res = await userinfo('Bearer not-a-token');
    await expectStatus(res, 401);
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer error="invalid_token"');
  });

  it('answers 400 invalid_request to a Bearer header that does not carry one token (RFC 6750 3.1)', async () => {
    for (const header of ['Bearer', 'Bearer a b', 'Bearer  ']) {
      const res = await userinfo(header);
      await expectStatus(res, 400);
      expect(res.headers.get('www-authenticate')).toStartWith('Bearer error="invalid_request"');
    }
  });

  it('answers 403 insufficient_scope for an access token without openid', async () => {
    const { access_token } = await tokensFor('read');
    const res = await userinfo(`Bearer ${access_token}`);
    await expectStatus(res, 403);
    expect(res.headers.get('www-authenticate')).toStartWith('Bearer error="insufficient_scope"');
  });

  it('answers 401 for a revoked access token', async () => {
    const { access_token } = await tokensFor('openid');
    await expectStatus(await postForm(s, '/oauth2/tokens/revoke', client, { token: access_token }), 200);
    await expectStatus(await userinfo(`Bearer ${access_token}`), 401);
  });
});

describe('a deleted person', () => {
  it('takes its grants along: its refresh token no longer refreshes, userinfo no longer answers', async () => {
    const person = await s.person();
    const tokens = await tokensFor('openid read', person);
    await expectStatus(await s.call('DELETE', `/persons/${person.personId}`), 204);
    await expectOAuthError(
      await refresh(s, client, tokens.refresh_token),
      400,
      'invalid_grant',
      /not a valid/,
    );
    await expectStatus(await userinfo(`Bearer ${tokens.access_token}`), 401);
    const rows = await s.service.ctx.storage.query<{ n: number }>(
      sql`select count(*)::int as n from oauth2_authorize_families where person_id = ${person.personId}`,
    );
    expect(rows[0]!.n).toBe(0);
  });
});

describe('a browser app (a public client) on another origin', () => {
  const origin = 'https://spa.example';

  it('may read discovery and the keys', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const res = await fetch(`${s.url}${path}`, { headers: { origin } });
      await expectStatus(res, 200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('may ask userinfo, after a preflight, and read its answer and its refusal', async () => {
    const preflight = await fetch(`${s.url}/oauth2/userinfo`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    await expectStatus(preflight, 204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('dpop');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');

    const { access_token } = await tokensFor('openid');
    const ok = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { origin, authorization: `Bearer ${access_token}` },
    });
    await expectStatus(ok, 200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');

    const refused = await fetch(`${s.url}/oauth2/userinfo`, {
      headers: { origin, authorization: 'Bearer nope' },
    });
    await expectStatus(refused, 401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('access-control-expose-headers')).toBe('www-authenticate, dpop-nonce');
    expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
  });
});
