import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import { manualClock } from '../../helpers/clock.ts';
import { type AuthorizeService, startAuthorizeService } from '../oauth2-authorize/fixture.ts';

const clock = manualClock(Date.now());
let s: AuthorizeService;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
});
afterAll(() => s.stop());

/** Claims signed with the deployment's token keys, as the issuer signs ID tokens unless told otherwise. */
function signed(claims: Record<string, unknown>, typ = 'JWT') {
  const now = Math.floor(clock.now() / 1000);
  return s.service.ctx.signer.sign(
    TOKEN_KEYS_OWNER,
    {
      iss: s.url,
      sub: 'person-1',
      aud: 'client-1',
      oid: s.org.id,
      iat: now,
      exp: now + 300,
      ...claims,
    },
    { typ },
  );
}

const verify = (token: string) => s.service.ctx.capability(tokenIssuer)!.verifyIdToken(token);

describe('verifyIdToken', () => {
  it("answers an ID token's organization, client, person and session, expired or not", async () => {
    const token = await signed({ sid: 'session-1' });
    const expected = { orgId: s.org.id, clientId: 'client-1', personId: 'person-1', sessionId: 'session-1' };
    expect(await verify(token)).toMatchObject(expected);
    clock.advance(3_600_000);
    expect(await verify(token)).toMatchObject(expected);
  });

  it('refuses identity tokens, other types, other issuers and altered ones', async () => {
    const refused = [
      await signed({ aud: s.org.id }),
      await signed({ aud: undefined }),
      await signed({ aud: ['client-1'] }),
      await signed({}, 'at+jwt'),
      await signed({}, 'logout+jwt'),
      await signed({ iss: 'https://other.example' }),
      await signed({ oid: undefined }),
      `${(await signed({})).slice(0, -4)}AAAA`,
      'a.b.c',
    ];
    for (const token of refused) expect(await verify(token)).toBeUndefined();
  });
});
