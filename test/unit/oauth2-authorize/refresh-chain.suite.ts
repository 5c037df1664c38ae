import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import type { Clock } from '../../../core/ports/clock.ts';
import { digest } from '../../../plugins/oauth2-authorize/store/digest.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  postForm,
  refresh,
} from './fixture.ts';

/**
 * A refresh token used twice within the grace window (10 s) answers twice, and both answers are one
 * generation of one chain: the first of them used carries the grant on, and the other, used after the
 * window, is a reuse that revokes everything, as the original used after the window does. `start`
 * gets the clock the service must run on.
 */
export function refreshChainSuite(label: string, start: (clock: Clock) => Promise<AuthorizeService>) {
  describe(label, () => {
    const clock = manualClock(Date.now());
    let s: AuthorizeService;
    let client: MadeClient;
    beforeAll(async () => {
      s = await start(clock);
      client = await s.createClient();
    });
    afterAll(() => s.stop());

    const introspect = async (token: string) =>
      (await postForm(s, '/oauth2/tokens/introspect', client, { token })).json;

    /** A refresh token of a fresh grant, then two answers to it within the window. */
    async function twoAnswers() {
      const { code, verifier } = await obtainCode(s, client);
      const tokens = (await exchange(s, client, code, verifier)).json;
      const original = String(tokens.refresh_token);
      const a = await refresh(s, client, original);
      await expectStatus(a, 200);
      clock.advance(3_000);
      const b = await refresh(s, client, original);
      await expectStatus(b, 200);
      return { original, a, b };
    }

    for (const first of ['first', 'second'] as const)
      it(`lets the ${first} answer carry on and revokes everything when the other comes after the window`, async () => {
        const { a, b } = await twoAnswers();
        const [winner, loser] = first === 'first' ? [a, b] : [b, a];
        clock.advance(1_000);
        const next = await refresh(s, client, String(winner.json.refresh_token));
        await expectStatus(next, 200);
        expect(await introspect(String(loser.json.refresh_token))).toEqual({ active: false });
        clock.advance(11_000);
        await expectOAuthError(
          await refresh(s, client, String(loser.json.refresh_token)),
          400,
          'invalid_grant',
          /already been used/,
        );
        await expectOAuthError(
          await refresh(s, client, String(next.json.refresh_token)),
          400,
          'invalid_grant',
          /revoked/,
        );
        for (const res of [a, b, next])
          expect(await introspect(String(res.json.access_token))).toEqual({ active: false });
      });

    it('lets the other answer in within the window of the first one used, still one chain', async () => {
      const { a, b } = await twoAnswers();
      const next = await refresh(s, client, String(a.json.refresh_token));
      await expectStatus(next, 200);
      // Two tabs: the other answer, used at once, still works; its successor is of the same generation.
      clock.advance(2_000);
      const late = await refresh(s, client, String(b.json.refresh_token));
      await expectStatus(late, 200);
      clock.advance(1_000);
      await expectStatus(await refresh(s, client, String(next.json.refresh_token)), 200);
      clock.advance(11_000);
      await expectOAuthError(
        await refresh(s, client, String(late.json.refresh_token)),
        400,
        'invalid_grant',
        /already been used/,
      );
    });

    it('answers both answers used at the same moment, each several times, without a server error', async () => {
      const { a, b } = await twoAnswers();
      const racing = await Promise.all(
        [a, b, a, b, a, b].map((res) => refresh(s, client, String(res.json.refresh_token))),
      );
      for (const res of racing) await expectStatus(res, 200);
      // Still one chain: used one at a time, each after the window, at most one of the six carries on;
      // its use (or the first reuse) ends all the others, which then revoke the grant.
      const later = [];
      for (const res of racing) {
        clock.advance(11_000);
        later.push(await refresh(s, client, String(res.json.refresh_token)));
      }
      expect(later.filter((res) => res.status === 200).length).toBeLessThanOrEqual(1);
      await expectOAuthError(later.at(-1)!, 400, 'invalid_grant');
    });

    it('revokes both answers when the original comes back after the window', async () => {
      const { original, a, b } = await twoAnswers();
      clock.advance(11_000);
      await expectOAuthError(await refresh(s, client, original), 400, 'invalid_grant', /already been used/);
      for (const res of [a, b]) {
        await expectOAuthError(
          await refresh(s, client, String(res.json.refresh_token)),
          400,
          'invalid_grant',
          /revoked/,
        );
        expect(await introspect(String(res.json.access_token))).toEqual({ active: false });
      }
    });

    it('takes a token recorded by a replica of an older version (no generation) as a current one', async () => {
      const { code, verifier } = await obtainCode(s, client);
      const first = (await exchange(s, client, code, verifier)).json;
      const second = await refresh(s, client, String(first.refresh_token));
      const third = await refresh(s, client, String(second.json.refresh_token));
      await expectStatus(third, 200);
      // During a rolling upgrade an older replica answers the next refresh: its INSERT names no generation.
      const older = `isr_${crypto.randomUUID().replaceAll('-', '')}`;
      const now = clock.now();
      await s.service.ctx.storage.query(sql`
        insert into oauth2_authorize_refresh_tokens
          (token_hash, family_id, issued_at, expires_at, spent_at, access_jti, access_exp)
        select ${await digest(older)}, family_id, ${now}, ${now + 3_600_000}, null, ${crypto.randomUUID()},
          ${Math.floor(now / 1000) + 3600}
        from oauth2_authorize_refresh_tokens where token_hash = ${await digest(String(third.json.refresh_token))}`);
      await s.service.ctx.storage.query(
        sql`update oauth2_authorize_refresh_tokens set spent_at = ${now} where token_hash = ${await digest(String(third.json.refresh_token))}`,
      );
      clock.advance(11_000);
      await expectStatus(await refresh(s, client, older), 200);
    });

    it('puts the generation back when a refresh is refused for its scope', async () => {
      const { a, b } = await twoAnswers();
      await expectOAuthError(
        await refresh(s, client, String(a.json.refresh_token), 'admin'),
        400,
        'invalid_scope',
      );
      // Nothing was used: both answers are still good after the window.
      clock.advance(11_000);
      await expectStatus(await refresh(s, client, String(b.json.refresh_token)), 200);
    });
  });
}
