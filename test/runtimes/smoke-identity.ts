/**
 * The identity half of the runtime smoke: create a person, set its password (argon2id through the
 * native add-on, @node-rs/argon2, which must load on every runtime), sign in, and validate the token,
 * both through the API and against /.well-known/jwks.json; then sign in with an imported bcrypt hash
 * (the other add-on, @node-rs/bcrypt).
 */
import { hashSync as bcryptHash } from '@node-rs/bcrypt';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { call, check, expectAnswer, raw, type SmokeTarget } from './http.ts';

export async function smokeIdentity(t: SmokeTarget): Promise<string[]> {
  const handle = { type: 'email_address', value: `smoke-${t.runtime}@example.com` };
  const secret = `smoke on ${t.runtime}, a long one`;

  const made = await call(t, 'POST', '/persons', { handles: [handle] });
  expectAnswer(made, 201, 'POST a person');
  const personId: string = made.json?.result?.person_id;
  check(typeof personId === 'string', `the person has an ID (got ${made.text})`);

  const set = await call(t, 'PUT', `/persons/${personId}/credentials/password`, { password: secret });
  expectAnswer(set, 204, 'PUT a password (argon2id)');

  // End-user facing: the organization only, no API key.
  const signIn = async (password: string, who: { type: string; value: string } = handle) => {
    const res = await fetch(`${t.baseUrl}/authenticate/password`, {
      method: 'POST',
      headers: { 'Service-OrgID': t.orgId, 'content-type': 'application/json' },
      body: JSON.stringify({ handle: who, password }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: JSON.parse(text || 'null') };
  };
  expectAnswer(await signIn('not the password at all'), 401, 'sign in with a wrong password');
  const ok = await signIn(secret);
  expectAnswer(ok, 200, 'sign in with the password');
  const token: string = ok.json?.result?.token;
  check(ok.json?.result?.person_id === personId, `the sign-in names the person (got ${ok.text})`);

  // An imported bcrypt hash ($2y$, as PHP writes them), verified by the native add-on on this runtime.
  const importedHandle = { type: 'username', value: `imported-${t.runtime}` };
  const imported = await call(t, 'POST', '/persons', { handles: [importedHandle] });
  expectAnswer(imported, 201, 'POST a person to import');
  const importedHash = bcryptHash(secret, 10).replace(/^\$2b\$/, '$2y$');
  const put = await call(t, 'PUT', `/persons/${imported.json?.result?.person_id}/credentials/password`, {
    password_hash: importedHash,
  });
  expectAnswer(put, 204, 'PUT an imported bcrypt hash');
  expectAnswer(await signIn('not the password at all', importedHandle), 401, 'a wrong password (bcrypt)');
  expectAnswer(await signIn(secret, importedHandle), 200, 'sign in with the imported bcrypt hash');

  const valid = await call(t, 'POST', '/token/validate', { token });
  expectAnswer(valid, 200, 'POST /token/validate');
  check(valid.json?.result?.valid === true, `the token is valid (got ${valid.text})`);

  const jwks = await (await fetch(`${t.baseUrl}/.well-known/jwks.json`)).json();
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { algorithms: ['ES256'] });
  check(
    payload.sub === personId && JSON.stringify(payload.authenticated_methods) === '["password"]',
    `the token verifies against the JWKS with the person's claims (got ${JSON.stringify(payload)})`,
  );
  // As the guides' curl examples send them: the JSON content-type on requests without a body. Node's
  // and Deno's servers hand such a request over with an empty body stream, Bun with none.
  const json = { 'content-type': 'application/json' };
  const minted = await call(t, 'POST', `/persons/${personId}/mint-token`, undefined, json);
  expectAnswer(minted, 201, 'mint-token without a body');
  const other = await call(t, 'POST', '/persons', {
    handles: [{ type: 'username', value: `gone-${t.runtime}` }],
  });
  expectAnswer(other, 201, 'POST another person');
  // As curl sends it: no content-length at all (a fetch client sends `content-length: 0`), which each
  // runtime's server hands over differently (Deno: a stream of one empty chunk).
  const gone = await raw(
    t,
    `DELETE /persons/${other.json?.result?.person_id} HTTP/1.1\r\nHost: localhost\r\nService-OrgID: ${t.orgId}\r\nService-API-Key: ${t.apiKey}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n`,
    5000,
  );
  check(
    gone.status === 204,
    `DELETE with a JSON content-type and no body: expected 204, got ${gone.status} ${gone.body}`,
  );
  return [
    'person, argon2id password, sign-in 401/200, bcrypt import sign-in 401/200, token valid (API and JWKS), bodiless mint-token and DELETE',
  ];
}
