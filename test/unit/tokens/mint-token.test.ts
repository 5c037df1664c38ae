import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { EVENTS_TOPIC } from '../../../core/events/types.ts';
import { ack, type Delivered } from '../../../core/ports/event-bus.ts';
import { waitFor } from '../../contract/event-bus.contract.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTokensService, type TokensService } from '../../helpers/tokens-service.ts';

let t: TokensService;
beforeAll(async () => {
  t = await startTokensService();
});
afterAll(() => t.stop());

const mint = (personId: string, body: unknown = {}, orgId?: string, key?: string) =>
  t.call('POST', `/persons/${personId}/mint-token`, {
    body,
    ...(orgId ? { orgId } : {}),
    ...(key ? { key } : {}),
  });

describe('POST /persons/{person_id}/mint-token', () => {
  it('mints a token that verifies against /.well-known/jwks.json with every claim', async () => {
    const person = await t.persons.addPerson({ groups: ['admins', 'beta'] });
    const res = await mint(person.personId, { custom_claims: { foo: 'bar', baz: { everything: 42 } } });
    await expectStatus(res, 201);
    const jwks = createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(res.json.result, jwks, {
      issuer: 'https://ids.test',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({
      iss: 'https://ids.test',
      sub: person.personId,
      oid: t.org.id,
      person_id: person.personId,
      authenticated_methods: ['api'],
      // The reference's mint-token payload: a minted token is never the person's first.
      first_token: false,
      groups: ['admins', 'beta'],
      foo: 'bar',
      baz: { everything: 42 },
    });
    expect(payload.jti).toMatch(/^[0-9a-f-]{36}$/);
    expect(payload.exp! - payload.iat!).toBe(3600);
    const again = await mint(person.personId);
    await expectStatus(again, 201);
    expect(decodeJwt(again.json.result).first_token).toBe(false);
  });

  it('puts groups under the organization groups claim name', async () => {
    const org = await t.service.ctx.orgs.create('Claims');
    const as = { orgId: org.organization.id, key: org.apiKey };
    await t.persons.setGroupsClaim('teams', as);
    const person = await t.persons.addPerson({ groups: ['red'] }, as);
    const res = await mint(person.personId, {}, org.organization.id, org.apiKey);
    await expectStatus(res, 201);
    const claims = decodeJwt(res.json.result);
    expect(claims.teams).toEqual(['red']);
    expect(claims.groups).toBeUndefined();
    const refused = await mint(
      person.personId,
      { custom_claims: { teams: [] } },
      org.organization.id,
      org.apiKey,
    );
    await expectStatus(refused, 400);
    expect(refused.text).toContain('custom_claims.teams');
  });

  it('refuses registered and reserved custom claims with 400 naming the claim', async () => {
    const person = await t.persons.addPerson();
    for (const claim of [
      'exp',
      'sub',
      'oid',
      'person_id',
      'first_token',
      'groups',
      'roles',
      'identity_service',
      'service',
      'sid',
    ]) {
      const res = await mint(person.personId, { custom_claims: { ok: 1, [claim]: 'x' } });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(`custom_claims.${claim}`);
    }
  });

  it('refuses custom_claims that are not an object', async () => {
    const person = await t.persons.addPerson();
    const res = await mint(person.personId, { custom_claims: [1] });
    await expectStatus(res, 400);
    expect(res.text).toContain('custom_claims');
  });

  it('takes a request without a body, or with an empty one, as no custom claims', async () => {
    const person = await t.persons.addPerson();
    const headers = {
      [t.service.ctx.headers.orgId]: t.org.id,
      [t.service.ctx.headers.apiKey]: t.apiKey,
      'content-type': 'application/json',
    };
    const url = `${t.url}/persons/${person.personId}/mint-token`;
    // Over HTTP with nothing sent, and as Node's and Deno's servers hand such a request over: an empty stream.
    const empty = new ReadableStream({ start: (c) => c.close() });
    for (const res of [
      await fetch(url, { method: 'POST', headers }),
      await fetch(url, { method: 'POST', headers: { ...headers, 'content-length': '0' }, body: '' }),
      await t.service.fetch(
        new Request(url, { method: 'POST', headers, body: empty, duplex: 'half' } as RequestInit),
      ),
    ]) {
      const text = await res.text();
      expect({ status: res.status, text }).toMatchObject({ status: 201 });
      expect(decodeJwt(JSON.parse(text).result).authenticated_methods).toEqual(['api']);
    }
    // A body that is there must still be JSON.
    const bad = await fetch(url, { method: 'POST', headers, body: '{' });
    expect({ status: bad.status, text: await bad.text() }).toMatchObject({ status: 400 });
  });

  it('answers 404 for an unknown person and for a person of another organization', async () => {
    await expectStatus(await mint(crypto.randomUUID()), 404);
    const other = await t.service.ctx.orgs.create('Other');
    const theirs = await t.persons.addPerson({}, { orgId: other.organization.id, key: other.apiKey });
    await expectStatus(await mint(theirs.personId), 404);
  });

  it('never runs beforeTokenIssued', async () => {
    const before = t.hooks[0].seen.length;
    await expectStatus(await mint((await t.persons.addPerson()).personId), 201);
    expect(t.hooks[0].seen.length).toBe(before);
  });

  it('emits TokenMinted_v1 with mint_token_api true', async () => {
    const seen: Delivered[] = [];
    const sub = t.service.ctx.bus.consume(EVENTS_TOPIC, async (m) => {
      seen.push(m);
      return ack();
    });
    try {
      const person = await t.persons.addPerson();
      const res = await mint(person.personId);
      await expectStatus(res, 201);
      const jti = decodeJwt(res.json.result).jti;
      const mine = () =>
        seen.map((m) => m.payload as Record<string, unknown>).find((e) => e.token_id === jti);
      await waitFor(() => mine() !== undefined, 10_000, 'TokenMinted_v1');
      expect(mine()).toMatchObject({
        person_id: person.personId,
        mint_token_api: true,
        first_token: false,
        authentications: [],
        event_metadata: { event_name: 'TokenMinted_v1' },
      });
    } finally {
      await sub.stop();
    }
  });
});

describe('/.well-known', () => {
  it('serves the JWKS publicly with Cache-Control and a strong ETag, 304 on If-None-Match', async () => {
    const res = await fetch(`${t.url}/.well-known/jwks.json`);
    await expectStatus(res, 200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const body = await res.json();
    expect(body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(body.keys[0].d).toBeUndefined();
    const cached = await fetch(`${t.url}/.well-known/jwks.json`, { headers: { 'if-none-match': etag } });
    await expectStatus(cached, 304);
  });

  it('serves the discovery document with the issuer and jwks_uri', async () => {
    const res = await fetch(`${t.url}/.well-known/openid-configuration`);
    await expectStatus(res, 200);
    expect(await res.json()).toMatchObject({
      issuer: 'https://ids.test',
      jwks_uri: 'https://ids.test/.well-known/jwks.json',
      id_token_signing_alg_values_supported: ['ES256'],
      subject_types_supported: ['public'],
    });
  });
});
