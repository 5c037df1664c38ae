import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTokensService, type TokensService } from '../../helpers/tokens-service.ts';

let t: TokensService;
const clock = manualClock(Date.now());
beforeAll(async () => {
  t = await startTokensService({ clock });
});
afterAll(() => t.stop());

const issuerOf = () => t.service.ctx.capability(tokenIssuer)!;
const authentication = {
  handle: { type: 'email_address', value: 'ada@example.com' },
  method: 'password',
  timestamp: '2026-01-01T00:00:00Z',
};
const signIn = (personId: string) =>
  issuerOf().issue({
    orgId: t.org.id,
    personId,
    methods: ['password'],
    issuer: 'authentication',
    authentications: [authentication],
    request: { clientIpAddress: '192.0.2.7', userAgent: 'probe/1', origin: 'https://app.example' },
  });
const validate = async (token: string, orgId?: string, key?: string) => {
  const res = await t.call('POST', '/token/validate', {
    body: { token },
    ...(orgId ? { orgId } : {}),
    ...(key ? { key } : {}),
  });
  await expectStatus(res, 200);
  return res.json.result;
};

describe('issuing for an authentication', () => {
  it('runs beforeTokenIssued with the trigger content and merges claims in order', async () => {
    const person = await t.persons.addPerson({ region: 'europe-belgium', groups: ['g'] });
    t.hooks[0].answer = () => ({ claims: { plan: 'free', tier: 1 } });
    t.hooks[1].answer = () => ({ claims: { plan: 'pro' } });
    try {
      const issued = await signIn(person.personId);
      const draft = t.hooks[0].seen.at(-1)!;
      expect(draft.content).toEqual({
        aud: t.org.id,
        iss: 'https://ids.test',
        sub: person.personId,
        region: 'europe-belgium',
        first_token: true,
        groups_claim_name: 'groups',
        authentications: [authentication],
        request_metadata: {
          client_ip_address: '192.0.2.7',
          origin: 'https://app.example',
          user_agent: 'probe/1',
        },
      });
      const claims = decodeJwt(issued.token);
      expect(claims).toMatchObject({
        plan: 'pro',
        tier: 1,
        authenticated_methods: ['password'],
        first_token: true,
        groups: ['g'],
      });
    } finally {
      t.hooks[0].answer = () => undefined;
      t.hooks[1].answer = () => undefined;
    }
  });

  it('blocks with 403 when a hook sets a reserved or registered claim', async () => {
    const person = await t.persons.addPerson();
    for (const claim of ['person_id', 'exp', 'groups']) {
      t.hooks[1].answer = () => ({ claims: { ok: 1, [claim]: 'x' } });
      const err = await signIn(person.personId).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      await expectStatus({ status: (err as ServiceError).status, text: String(err) }, 403);
      expect((err as ServiceError).message).toContain(claim);
    }
    t.hooks[1].answer = () => undefined;
    // A blocked issuance is nobody's first token.
    expect((await signIn(person.personId)).firstToken).toBe(true);
  });

  it('lets a handler error reach the caller', async () => {
    t.hooks[0].answer = () => {
      throw new ServiceError(403, 'HOOK_SAID_NO', 'no');
    };
    try {
      await expect(signIn((await t.persons.addPerson()).personId)).rejects.toThrow('no');
    } finally {
      t.hooks[0].answer = () => undefined;
    }
  });

  it('gives first_token true to exactly one of many concurrent first issuances', async () => {
    const person = await t.persons.addPerson();
    const tokens = await Promise.all(Array.from({ length: 8 }, () => signIn(person.personId)));
    expect(tokens.filter((x) => x.firstToken)).toHaveLength(1);
  });
});

describe('POST /token/validate and /token/revoke', () => {
  it('says valid with the expiry, then expired once the lifetime has passed', async () => {
    const { token } = await signIn((await t.persons.addPerson()).personId);
    const ok = await validate(token);
    expect(ok).toMatchObject({ valid: true, expires_in_seconds: 3600 });
    clock.advance(3601_000);
    expect(await validate(token)).toEqual({
      valid: false,
      invalidity_reason: 'expired',
      invalidity_detail: 'expired',
    });
  });

  it('says bad_signature, unknown_key and malformed', async () => {
    const { token } = await signIn((await t.persons.addPerson()).personId);
    const [h, p, s] = token.split('.');
    const flipped = `${h}.${p}.${s!.startsWith('A') ? `B${s!.slice(1)}` : `A${s!.slice(1)}`}`;
    expect((await validate(flipped)).invalidity_detail).toBe('bad_signature');
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT(decodeJwt(token))
      .setProtectedHeader({ alg: 'ES256', kid: (await exportJWK(publicKey)).x! })
      .sign(privateKey);
    expect((await validate(forged)).invalidity_detail).toBe('unknown_key');
    expect((await validate('not.a.jwt')).invalidity_detail).toBe('malformed');
    await expectStatus(await t.call('POST', '/token/validate', { body: { token: 42 } }), 400);
  });

  it('says person_not_active once the person is deactivated or deleted, and valid again when reactivated', async () => {
    const person = await t.persons.addPerson();
    const { token } = await signIn(person.personId);
    const path = `/persons/${person.personId}`;
    await expectStatus(await t.call('PATCH', path, { body: { active: false } }), 200);
    expect(await validate(token)).toEqual({
      valid: false,
      invalidity_reason: 'person_not_active',
      invalidity_detail: 'person_inactive',
    });
    await expectStatus(await t.call('PATCH', path, { body: { active: true } }), 200);
    expect(await validate(token)).toMatchObject({ valid: true });
    await expectStatus(await t.call('DELETE', path), 204);
    expect(await validate(token)).toEqual({
      valid: false,
      invalidity_reason: 'person_not_active',
      invalidity_detail: 'person_deleted',
    });
  });

  it("answers invalidity_reason only in the reference's words (docs/spec/reference/tokens.openapi.yml)", async () => {
    const reference = [
      'invalid_token_content',
      'expired',
      'invalid_issuer',
      'not_enough_factors',
      'person_not_active',
    ];
    const { token } = await signIn((await t.persons.addPerson()).personId);
    const [h, p, s] = token.split('.');
    const other = await t.service.ctx.orgs.create('Elsewhere');
    const answers = [
      await validate('not.a.jwt'),
      await validate(`${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`),
      await validate(token, other.organization.id, other.apiKey),
    ];
    for (const a of answers) expect(reference).toContain(a.invalidity_reason);
  });

  it('says revoked after a revoke, which is idempotent', async () => {
    const { token } = await signIn((await t.persons.addPerson()).personId);
    await expectStatus(await t.call('POST', '/token/revoke', { body: { token } }), 204);
    expect(await validate(token)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'revoked',
    });
    await expectStatus(await t.call('POST', '/token/revoke', { body: { token } }), 204);
    await expectStatus(await t.call('POST', '/token/revoke', { body: { token: 'x.y.z' } }), 400);
  });

  it('keeps tokens apart by organization', async () => {
    const other = await t.service.ctx.orgs.create('Other');
    const { token } = await signIn((await t.persons.addPerson()).personId);
    expect(await validate(token, other.organization.id, other.apiKey)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'wrong_organization',
    });
    const res = await t.call('POST', '/token/revoke', {
      body: { token },
      orgId: other.organization.id,
      key: other.apiKey,
    });
    await expectStatus(res, 400);
    expect((await validate(token)).valid).toBe(true);
    await expectStatus(await t.call('POST', '/token/validate', { body: { token }, key: null }), 401);
  });

  it('keeps the old key published after a rotation, and its tokens valid', async () => {
    const { token } = await signIn((await t.persons.addPerson()).personId);
    const before = await fetch(`${t.url}/.well-known/jwks.json`);
    const { kid } = await t.service.ctx.signer.rotate(TOKEN_KEYS_OWNER);
    const after = await fetch(`${t.url}/.well-known/jwks.json`);
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
    const kids = (await after.json()).keys.map((k: { kid: string }) => k.kid);
    const oldKid = (await before.json()).keys[0].kid;
    expect(kids).toEqual([kid, oldKid]);
    expect((await validate(token)).valid).toBe(true);
    const fresh = await signIn((await t.persons.addPerson()).personId);
    expect(JSON.parse(atob(fresh.token.split('.')[0]!)).kid).toBe(kid);
  });
});
