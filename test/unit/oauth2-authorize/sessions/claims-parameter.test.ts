// The `claims` parameter (OpenID Connect Core 5.5) asks for person members in the ID token: only those
// of the scopes granted, so it never hands a client what its registration or a consent does not allow.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  exchange,
  type MadeClient,
  obtainCode,
  startAuthorizeService,
} from '../fixture.ts';

let s: AuthorizeService;
const who = { handle: { value: 'claims-ada' }, password: 'correct horse battery claims' };

beforeAll(async () => {
  s = await startAuthorizeService();
  const made = await s.call('POST', '/persons', {
    body: {
      handles: [
        { type: 'email_address', value: 'claims.ada@example.com', verified: true },
        { type: 'username', value: who.handle.value },
      ],
    },
  });
  await expectStatus(made, 201);
  await expectStatus(
    await s.call('PUT', `/persons/${made.json.result.person_id}/credentials/password`, {
      body: { password: who.password },
    }),
    204,
  );
});
afterAll(() => s.stop());

const ASK_ALL = JSON.stringify({
  id_token: { email: { essential: true }, email_verified: null, username: null, phone_number: null },
});

async function idTokenFor(client: MadeClient, scope: string) {
  const { code, verifier } = await obtainCode(s, client, { scope, claims: ASK_ALL }, who);
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return decodeJwt(String(res.json.id_token));
}

describe('the claims parameter in the ID token', () => {
  test('answers the members of the scopes granted, as the person has them', async () => {
    const client = await s.createClient({ scopes: ['openid', 'email', 'username'] });
    const token = await idTokenFor(client, 'openid email');
    expect(token.email).toBe('claims.ada@example.com');
    expect(token.email_verified).toBe(true);
    // username is a scope the client may have but did not ask for here; the person has no phone.
    expect(token.username).toBeUndefined();
    expect(token.phone_number).toBeUndefined();
  });

  test('gives nothing a client was not registered for (a client of openid alone gets no email)', async () => {
    const client = await s.createClient({ scopes: ['openid'] });
    const token = await idTokenFor(client, 'openid');
    expect(token.sub).toBeTruthy();
    expect(token.email).toBeUndefined();
    expect(token.email_verified).toBeUndefined();
    expect(token.username).toBeUndefined();
  });
});
