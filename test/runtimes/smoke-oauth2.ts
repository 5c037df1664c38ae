/**
 * The OAuth 2.0 part of the runtime smoke: create a client, get a client_credentials access token by
 * HTTP Basic, verify it against /.well-known/jwks.json, introspect it, and see a wrong secret refused.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { call, check, expectAnswer, type SmokeTarget } from './http.ts';

export async function smokeOAuth2(t: SmokeTarget): Promise<string[]> {
  const made = await call(t, 'POST', '/oauth2/clients', {
    client_name: `smoke on ${t.runtime}`,
    scopes: ['read'],
    grant_types: ['client_credentials'],
  });
  expectAnswer(made, 201, 'POST an OAuth 2.0 client');
  const { client_id: id, client_secret: secret } = made.json.result as {
    client_id: string;
    client_secret: string;
  };
  const post = (path: string, form: string, user: string, password: string) =>
    fetch(`${t.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${encodeURIComponent(user)}:${encodeURIComponent(password)}`)}`,
      },
      body: form,
    });

  const granted = await post('/oauth2/tokens', 'grant_type=client_credentials&scope=read', id, secret);
  const body = (await granted.json()) as { access_token?: string; token_type?: string; scope?: string };
  check(
    granted.status === 200 && body.token_type === 'bearer' && body.scope === 'read',
    `client_credentials answers a token (got ${granted.status} ${JSON.stringify(body)})`,
  );
  check(granted.headers.get('cache-control') === 'no-store', 'the token answer is not cacheable');
  const jwks = await (await fetch(`${t.baseUrl}/.well-known/jwks.json`)).json();
  const { payload, protectedHeader } = await jwtVerify(body.access_token!, createLocalJWKSet(jwks), {
    algorithms: ['ES256'],
    typ: 'at+jwt',
  });
  check(
    payload.client_id === id && payload.oid === t.orgId,
    `the access token's claims (got ${JSON.stringify(payload)})`,
  );
  check(protectedHeader.typ === 'at+jwt', 'the access token is typ at+jwt');

  const active = await post('/oauth2/tokens/introspect', `token=${body.access_token}`, id, secret);
  check(((await active.json()) as { active?: boolean }).active === true, 'introspection says active');

  const refused = await post('/oauth2/tokens', 'grant_type=client_credentials', id, 'ocs_wrong');
  const error = (await refused.json()) as { error?: string };
  check(
    refused.status === 401 && error.error === 'invalid_client' && refused.headers.has('www-authenticate'),
    `a wrong secret answers 401 invalid_client with a challenge (got ${refused.status} ${JSON.stringify(error)})`,
  );
  return ['oauth2 client, client_credentials token (JWKS, introspection), invalid_client'];
}
