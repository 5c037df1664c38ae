import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTokensService, type TokensService } from '../../helpers/tokens-service.ts';

let t: TokensService;
beforeAll(async () => {
  t = await startTokensService();
});
afterAll(() => t.stop());

const issuerOf = () => t.service.ctx.capability(tokenIssuer)!;
const authentication = {
  handle: { type: 'username', value: 'ada' },
  method: 'password',
  timestamp: '2026-01-01T00:00:00Z',
};
const idTokenFor = (personId: string, idToken: { clientId: string; nonce?: string; authTime: number }) =>
  issuerOf().issue({
    orgId: t.org.id,
    personId,
    methods: ['password'],
    issuer: 'oauth2',
    authentications: [authentication],
    request: { clientIpAddress: '192.0.2.7' },
    idToken,
  });

describe('ID tokens (IssueRequest.idToken)', () => {
  it('carries aud and azp (the client), nonce and auth_time, and verifies against the JWKS', async () => {
    const { personId } = await t.persons.addPerson();
    const issued = await idTokenFor(personId, {
      clientId: 'app-1',
      nonce: 'n-0S6_WzA2Mj',
      authTime: 1_800_000_000,
    });
    const { payload, protectedHeader } = await jwtVerify(
      issued.token,
      createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`)),
      { issuer: 'https://ids.test', audience: 'app-1', algorithms: ['ES256'] },
    );
    expect(protectedHeader.typ).toBe('JWT');
    expect(payload).toMatchObject({
      sub: personId,
      aud: 'app-1',
      azp: 'app-1',
      nonce: 'n-0S6_WzA2Mj',
      auth_time: 1_800_000_000,
      oid: t.org.id,
      authenticated_methods: ['password'],
    });
    // Signed by the same keys as identity tokens, but for the client: not an identity token.
    const validated = await t.call('POST', '/token/validate', { body: { token: issued.token } });
    await expectStatus(validated, 200);
    expect(validated.json.result).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'wrong_token_type',
    });
  });

  it('leaves nonce out when the request had none; identity tokens have their organization as aud', async () => {
    const { personId } = await t.persons.addPerson();
    const issued = await idTokenFor(personId, { clientId: 'app-1', authTime: 1_800_000_000 });
    expect(issued.claims).not.toHaveProperty('nonce');
    const plain = await issuerOf().issue({
      orgId: t.org.id,
      personId,
      methods: ['password'],
      issuer: 'authentication',
      authentications: [authentication],
      request: {},
    });
    expect(plain.claims.aud).toBe(t.org.id);
    for (const claim of ['azp', 'auth_time']) expect(plain.claims).not.toHaveProperty(claim);
  });

  it('runs the token_minted hook for issuer oauth2 before it signs', async () => {
    const { personId } = await t.persons.addPerson();
    t.hooks[0].answer = () => ({ claims: { plan: 'pro' } });
    try {
      const issued = await idTokenFor(personId, { clientId: 'app-2', nonce: 'x', authTime: 1 });
      const draft = t.hooks[0].seen.at(-1)!;
      expect(draft.issuer).toBe('oauth2');
      expect(draft.claims).toMatchObject({ aud: 'app-2', nonce: 'x' });
      expect(draft.content.authentications).toEqual([authentication]);
      expect(issued.claims).toMatchObject({ plan: 'pro', aud: 'app-2' });
    } finally {
      t.hooks[0].answer = () => undefined;
    }
  });

  it("blocks with 403 when a hook sets one of the ID token's own claims", async () => {
    const { personId } = await t.persons.addPerson();
    for (const claim of ['nonce', 'azp', 'auth_time', 'aud']) {
      t.hooks[1].answer = () => ({ claims: { [claim]: 'forged' } });
      try {
        const err = await idTokenFor(personId, { clientId: 'app-3', nonce: 'n', authTime: 1 }).catch(
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(ServiceError);
        await expectStatus({ status: (err as ServiceError).status, text: String(err) }, 403);
        expect((err as ServiceError).message).toContain(claim);
      } finally {
        t.hooks[1].answer = () => undefined;
      }
    }
  });
});
