import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { oauth2Clients } from '../../../plugins/oauth2/schema.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

const CLIENTS = '/oauth2/clients';
let t: TestService;
let publicJwk: JWK;
let privateJwk: JWK;

beforeAll(async () => {
  t = await startTestService();
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  publicJwk = { ...(await exportJWK(publicKey)), kid: 'k1' };
  privateJwk = { ...(await exportJWK(privateKey)), kid: 'k1' };
});
afterAll(() => t.stop());

const base = { client_name: 'Agent', grant_types: ['client_credentials'] };
const create = (body: Record<string, unknown>) => t.call('POST', CLIENTS, { body: { ...base, ...body } });

/** Expects a 400 whose first message starts with `field` and contains `rule`. */
async function expectRefusal(res: Awaited<ReturnType<typeof create>>, field: string, rule: string) {
  await expectStatus(res, 400);
  const message = res.json.errors[0].message as string;
  expect(message).toStartWith(field);
  expect(message).toContain(rule);
}

describe('RFC 7591 client metadata on POST /oauth2/clients', () => {
  it('takes every member and answers them in RFC 7591 form, on create and GET', async () => {
    const res = await create({
      scope: 'read write read',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
      client_uri: 'https://agent.example',
      logo_uri: 'https://agent.example/logo.png',
      policy_uri: 'https://agent.example/privacy',
      tos_uri: 'https://agent.example/terms',
      contacts: ['ops@agent.example', 'ops@agent.example', 'sec@agent.example'],
      software_id: '4NRB1-0XZABZI9E6-5SM3R',
      software_version: '2.1.0',
    });
    await expectStatus(res, 201);
    const made = res.json.result;
    expect(made).toMatchObject({
      scopes: ['read', 'write'],
      scope: 'read write',
      public: false,
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [publicJwk] },
      client_uri: 'https://agent.example',
      logo_uri: 'https://agent.example/logo.png',
      policy_uri: 'https://agent.example/privacy',
      tos_uri: 'https://agent.example/terms',
      contacts: ['ops@agent.example', 'sec@agent.example'],
      software_id: '4NRB1-0XZABZI9E6-5SM3R',
      software_version: '2.1.0',
    });
    // A private_key_jwt client proves itself with its keys: it gets no secret.
    expect(made.client_secret).toBeUndefined();
    expect(made.jwks_uri).toBeUndefined();
    const got = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    await expectStatus(got, 200);
    expect(got.json.result).toEqual(made);
  });

  it('reads token_endpoint_auth_method none as a public client, and the others as confidential', async () => {
    const pub = await create({
      scopes: ['read'],
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    await expectStatus(pub, 201);
    expect(pub.json.result).toMatchObject({ public: true, token_endpoint_auth_method: 'none' });
    expect(pub.json.result.client_secret).toBeUndefined();
    const post = await create({ scopes: ['read'], token_endpoint_auth_method: 'client_secret_post' });
    await expectStatus(post, 201);
    expect(post.json.result).toMatchObject({
      public: false,
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(post.json.result.client_secret).toStartWith('ocs_');
    const jwt = await create({ scopes: ['read'], token_endpoint_auth_method: 'client_secret_jwt' });
    await expectStatus(jwt, 201);
    expect(jwt.json.result.client_secret).toStartWith('ocs_');
    // Today's members alone answer the method of their type.
    const old = await create({ scopes: ['read'] });
    expect(old.json.result.token_endpoint_auth_method).toBe('client_secret_basic');
  });

  it('keeps the client_secret_jwt secret sealed, not in the clear', async () => {
    const res = await create({ scopes: ['read'], token_endpoint_auth_method: 'client_secret_jwt' });
    await expectStatus(res, 201);
    const { client_id, client_secret } = res.json.result;
    const [row] = await t.service.ctx.storage.db
      .select()
      .from(oauth2Clients)
      .where(eq(oauth2Clients.clientId, client_id));
    expect(row!.secretSealed).toBeString();
    expect(row!.secretSealed).not.toContain(client_secret);
    const opened = await t.service.ctx.secrets.open(row!.secretSealed!, `oauth2-client-secret:${client_id}`);
    expect(opened).toBe(client_secret);
  });

  const refusals: [string, Record<string, unknown>, string, string][] = [
    ['scope beside other scopes', { scopes: ['a'], scope: 'a b' }, 'body.scope', 'names other scopes'],
    ['a scope string with two spaces', { scope: 'a  b' }, 'body.scope', 'separated by single spaces'],
    ['neither scope nor scopes', {}, 'body.scopes', 'is required (or scope'],
    [
      'an unknown method',
      { scopes: ['a'], token_endpoint_auth_method: 'tls_client_auth' },
      'body.token_endpoint_auth_method',
      'must be one of',
    ],
    [
      'none for a confidential client',
      { scopes: ['a'], public: false, token_endpoint_auth_method: 'none' },
      'body.token_endpoint_auth_method',
      'none means a public client',
    ],
    [
      'a secret method for a public client',
      {
        scopes: ['a'],
        public: true,
        grant_types: ['authorization_code'],
        redirect_uris: ['https://a.example/cb'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      'body.token_endpoint_auth_method',
      'is for confidential clients',
    ],
    [
      'private_key_jwt without keys',
      { scopes: ['a'], token_endpoint_auth_method: 'private_key_jwt' },
      'body.jwks_uri',
      'needs its public keys',
    ],
    [
      'jwks and jwks_uri together',
      {
        scopes: ['a'],
        jwks: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'abc' }] },
        jwks_uri: 'https://a.example/jwks',
      },
      'body.jwks',
      'not both',
    ],
    [
      'a private key in jwks',
      { scopes: ['a'], jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y', d: 'secret' }] } },
      'body.jwks.keys[0]',
      'private or symmetric key material (d)',
    ],
    [
      'a symmetric key in jwks',
      { scopes: ['a'], jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } },
      'body.jwks.keys[0]',
      'private or symmetric key material (k)',
    ],
    [
      'an RSA key without n',
      { scopes: ['a'], jwks: { keys: [{ kty: 'RSA', e: 'AQAB' }] } },
      'body.jwks.keys[0]',
      'needs n and e',
    ],
    ['an empty key set', { scopes: ['a'], jwks: { keys: [] } }, 'body.jwks.keys', 'at least one key'],
    ['a jwks that is no key set', { scopes: ['a'], jwks: 'keys' }, 'body.jwks', 'must be a JWK Set'],
    [
      'an http jwks_uri',
      { scopes: ['a'], jwks_uri: 'http://a.example/jwks' },
      'body.jwks_uri',
      'must use https',
    ],
    [
      'a jwks_uri with a fragment',
      { scopes: ['a'], jwks_uri: 'https://a.example/jwks#k' },
      'body.jwks_uri',
      'fragment',
    ],
    [
      'a client_uri that is not https',
      { scopes: ['a'], client_uri: 'javascript:alert(1)' },
      'body.client_uri',
      'must use https',
    ],
    [
      'a logo_uri that is relative',
      { scopes: ['a'], logo_uri: '/logo.png' },
      'body.logo_uri',
      'absolute https URL',
    ],
    [
      'a contact that is no email',
      { scopes: ['a'], contacts: ['call me'] },
      'body.contacts[0]',
      'email address',
    ],
    ['an empty software_id', { scopes: ['a'], software_id: '' }, 'body.software_id', 'must not be empty'],
  ];
  for (const [what, body, field, rule] of refusals)
    it(`refuses ${what} with 400 naming the field`, async () => {
      await expectRefusal(await create(body), field, rule);
    });

  it('refuses the private key even when the member is given as private material in an RSA key', async () => {
    const res = await create({
      scopes: ['a'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [privateJwk] },
    });
    await expectRefusal(res, 'body.jwks.keys[0]', 'must be a public key');
  });
});

describe('RFC 7591 client metadata on PATCH /oauth2/clients/{id}', () => {
  it('sets, keeps and removes members, and checks the result', async () => {
    const made = await create({ scopes: ['a'], client_uri: 'https://one.example' });
    await expectStatus(made, 201);
    const path = `${CLIENTS}/${made.json.result.client_id}`;
    const patched = await t.call('PATCH', path, {
      body: { scope: 'a b', tos_uri: 'https://one.example/tos', contacts: ['x@one.example'] },
    });
    await expectStatus(patched, 200);
    expect(patched.json.result).toMatchObject({
      scopes: ['a', 'b'],
      scope: 'a b',
      client_uri: 'https://one.example',
      tos_uri: 'https://one.example/tos',
      contacts: ['x@one.example'],
    });
    const removed = await t.call('PATCH', path, { body: { client_uri: null } });
    await expectStatus(removed, 200);
    expect(removed.json.result.client_uri).toBeUndefined();
    expect(removed.json.result.tos_uri).toBe('https://one.example/tos');
    // Switching to private_key_jwt needs keys; with them it is taken.
    await expectRefusal(
      await t.call('PATCH', path, { body: { token_endpoint_auth_method: 'private_key_jwt' } }),
      'body.jwks_uri (the client after this change)',
      'needs its public keys',
    );
    const keyed = await t.call('PATCH', path, {
      body: { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://one.example/jwks' },
    });
    await expectStatus(keyed, 200);
    expect(keyed.json.result).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'https://one.example/jwks',
    });
    // Inline keys beside the stored jwks_uri are refused; with jwks_uri: null they replace it.
    await expectRefusal(
      await t.call('PATCH', path, { body: { jwks: { keys: [publicJwk] } } }),
      'body.jwks (the client after this change)',
      'not both',
    );
    const swapped = await t.call('PATCH', path, { body: { jwks: { keys: [publicJwk] }, jwks_uri: null } });
    await expectStatus(swapped, 200);
    expect(swapped.json.result.jwks).toEqual({ keys: [publicJwk] });
    expect(swapped.json.result.jwks_uri).toBeUndefined();
  });

  it('keeps the client type, and takes client_secret_jwt only at creation', async () => {
    const made = await create({ scopes: ['a'] });
    const path = `${CLIENTS}/${made.json.result.client_id}`;
    await expectRefusal(
      await t.call('PATCH', path, { body: { token_endpoint_auth_method: 'none' } }),
      'body.token_endpoint_auth_method',
      'public cannot change',
    );
    await expectRefusal(
      await t.call('PATCH', path, { body: { token_endpoint_auth_method: 'client_secret_jwt' } }),
      'body.token_endpoint_auth_method',
      'chosen when the client is created',
    );
    await expectRefusal(
      await t.call('PATCH', path, { body: { scopes: ['a'], scope: 'b' } }),
      'body.scope',
      'names other scopes',
    );
  });

  it('drops the sealed secret when a client leaves client_secret_jwt, keeping its secret usable', async () => {
    const made = await create({ scopes: ['a'], token_endpoint_auth_method: 'client_secret_jwt' });
    const { client_id, client_secret } = made.json.result;
    const sealedOf = async () =>
      (
        await t.service.ctx.storage.db
          .select()
          .from(oauth2Clients)
          .where(eq(oauth2Clients.clientId, client_id))
      )[0]!.secretSealed;
    expect(await sealedOf()).toBeString();
    const basic = await t.call('PATCH', `${CLIENTS}/${client_id}`, {
      body: { token_endpoint_auth_method: 'client_secret_basic' },
    });
    await expectStatus(basic, 200);
    expect(await sealedOf()).toBeNull();
    const res = await t.call('POST', '/oauth2/tokens', {
      raw: 'grant_type=client_credentials',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${client_id}:${client_secret}`)}`,
      },
      key: null,
      orgId: null,
    });
    await expectStatus(res, 200);
  });

  it("cannot read or change another organization's client metadata", async () => {
    const hostile = await t.service.ctx.orgs.create('Hostile');
    const made = await create({ scopes: ['a'], contacts: ['mine@acme.example'] });
    const path = `${CLIENTS}/${made.json.result.client_id}`;
    const as = { orgId: hostile.organization.id, key: hostile.apiKey };
    await expectStatus(await t.call('GET', path, as), 404);
    await expectStatus(
      await t.call('PATCH', path, { ...as, body: { jwks_uri: 'https://evil.example/jwks' } }),
      404,
    );
    const mine = await t.call('GET', path);
    expect(mine.json.result.jwks_uri).toBeUndefined();
  });
});
