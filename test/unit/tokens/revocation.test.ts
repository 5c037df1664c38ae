import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { defineErrors } from '../../../core/errors.ts';
import { definePlugin } from '../../../core/plugin.ts';
import { onTokenRevoked, type TokenRevoked } from '../../../core/tokens/token-revoked.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { sdk } from '../../../plugins/sdk/index.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

// onTokenRevoked is the seam where the OAuth plugin will revoke a token's refresh family: it must run
// once per revocation, inside the revoking transaction, and be able to roll it back.

const ProbeErrors = defineErrors({ FAMILY_LOCKED: { status: 409, message: 'the refresh family is locked' } });
const seen: Array<Omit<TokenRevoked, 'tx'>> = [];
let refuse = false;
const familyProbe = definePlugin({
  id: 'family-probe',
  setup: () => ({
    attach: [
      onTokenRevoked.attach({
        run: ({ tx: _, ...revoked }) => {
          seen.push(revoked);
          if (refuse) throw ProbeErrors.FAMILY_LOCKED();
        },
      }),
    ],
  }),
});

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ definition: { plugins: [persons(), tokens(), sdk(), familyProbe] } });
});
afterAll(() => t.stop());

async function personToken() {
  const made = await t.call('POST', '/persons', {
    body: { handles: [{ type: 'username', value: `r-${crypto.randomUUID().slice(0, 8)}` }] },
  });
  await expectStatus(made, 201);
  const personId: string = made.json.result.person_id;
  const minted = await t.call('POST', `/persons/${personId}/mint-token`, { body: {} });
  await expectStatus(minted, 201);
  return { personId, token: minted.json.result as string, jti: decodeJwt(minted.json.result).jti as string };
}
const validity = async (token: string) =>
  (await t.call('POST', '/token/validate', { body: { token } })).json.result;

describe('onTokenRevoked', () => {
  it('runs once for POST /token/revoke, with the token, its person and reason api', async () => {
    const { personId, token, jti } = await personToken();
    const before = seen.length;
    await expectStatus(await t.call('POST', '/token/revoke', { body: { token } }), 204);
    await expectStatus(await t.call('POST', '/token/revoke', { body: { token } }), 204);
    expect(seen.slice(before)).toEqual([{ orgId: t.org.id, tokenId: jti, personId, reason: 'api' }]);
  });

  it('runs once for POST /logout, with reason logout', async () => {
    const { personId, token, jti } = await personToken();
    const before = seen.length;
    await expectStatus(
      await t.call('POST', '/logout', { key: null, headers: { authorization: `Bearer ${token}` } }),
      204,
    );
    expect(seen.slice(before)).toEqual([{ orgId: t.org.id, tokenId: jti, personId, reason: 'logout' }]);
  });

  it("rolls the revocation back when a handler throws, and the caller gets the handler's error", async () => {
    const { token } = await personToken();
    refuse = true;
    try {
      const res = await t.call('POST', '/token/revoke', { body: { token } });
      await expectStatus(res, 409);
      expect(res.json.errors[0].message).toBe('the refresh family is locked');
      await expectStatus(
        await t.call('POST', '/logout', { key: null, headers: { authorization: `Bearer ${token}` } }),
        409,
      );
    } finally {
      refuse = false;
    }
    expect(await validity(token)).toMatchObject({ valid: true });
  });
});

describe('tokenIssuer.revoke', () => {
  it("commits or rolls back with the caller's transaction, and says whether this call revoked it", async () => {
    const issuer = t.service.ctx.capability(tokenIssuer)!;
    const { token, jti } = await personToken();
    const exp = decodeJwt(token).exp!;
    const revocation = { orgId: t.org.id, tokenId: jti, expiresAt: exp, reason: 'api' as const };
    await expect(
      t.service.ctx.storage.transaction(async (tx) => {
        expect(await issuer.revoke(revocation, { tx })).toBe(true);
        throw new Error('the caller changed its mind');
      }),
    ).rejects.toThrow('the caller changed its mind');
    expect(await validity(token)).toMatchObject({ valid: true });
    expect(await issuer.revoke(revocation)).toBe(true);
    expect(await issuer.revoke(revocation)).toBe(false);
    expect(await validity(token)).toEqual({
      valid: false,
      invalidity_reason: 'invalid_token_content',
      invalidity_detail: 'revoked',
    });
  });
});
