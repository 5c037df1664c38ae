import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import postgres from 'postgres';
import { digest } from '../../plugins/oauth2-authorize/store/digest.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  exchange,
  expectOAuthError,
  loginByHttp,
  type MadeClient,
  obtainCode,
  opts,
  postForm,
  REDIRECT,
  refresh,
  startAuthorizeService,
} from '../unit/oauth2-authorize/fixture.ts';
import { refreshChainSuite } from '../unit/oauth2-authorize/refresh-chain.suite.ts';
import { DATABASE_URL, deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

/** The suite on a Postgres schema of its own, with pg-queue or (given a stream prefix) JetStream. */
function onPostgres(title: string, streamPrefix?: string) {
  describe(title, () => {
    let s: AuthorizeService;
    let client: MadeClient;
    let drop: () => Promise<void>;
    let schema: string;
    beforeAll(async () => {
      const pg = await isolatedPostgres('oauth2_authorize');
      drop = pg.drop;
      schema = pg.schema;
      s = await startAuthorizeService({
        storage: pg.storage,
        env: streamPrefix ? { NATS_URL, NATS_STREAM_PREFIX: streamPrefix } : {},
      });
      client = await s.createClient();
    });
    afterAll(async () => {
      await s.stop();
      await drop();
      if (streamPrefix) await deleteStreams(streamPrefix);
    });

    const introspect = async (token: string) =>
      (await postForm(s, '/oauth2/tokens/introspect', client, { token })).json;

    it('runs the code flow with PKCE and a refresh, driven by oauth4webapi from discovery', async () => {
      const as = await discover(s);
      const c: oauth.Client = { client_id: client.client_id };
      const auth = oauth.ClientSecretBasic(client.client_secret!);
      const person = await s.person();
      const { url, verifier, state, nonce } = await authorizationUrl(as, client.client_id);
      const params = oauth.validateAuthResponse(
        as,
        c,
        await loginByHttp(s, url, person.handle.value, person.password),
        state,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(
        as,
        c,
        await oauth.authorizationCodeGrantRequest(as, c, auth, params, REDIRECT, verifier, opts),
        { expectedNonce: nonce, requireIdToken: true },
      );
      expect(oauth.getValidatedIdTokenClaims(tokens)).toMatchObject({ sub: person.personId, nonce });
      const refreshed = await oauth.processRefreshTokenResponse(
        as,
        c,
        await oauth.refreshTokenGrantRequest(as, c, auth, tokens.refresh_token!, opts),
      );
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      // The login's events went through the bus.
      const mine = async (name: string) =>
        (await s.eventsNamed(name)).filter((e) => e.person_id === person.personId);
      expect(await mine('AuthenticationSucceeded_v1')).toHaveLength(1);
      expect((await mine('TokenMinted_v1')).length).toBeGreaterThanOrEqual(1);
    });

    it('lets eight concurrent refreshes of one token all succeed within the grace window', async () => {
      const { code, verifier } = await obtainCode(s, client);
      const tokens = (await exchange(s, client, code, verifier)).json;
      const token = String(tokens.refresh_token);
      const racing = await Promise.all(Array.from({ length: 8 }, () => refresh(s, client, token)));
      for (const res of racing) await expectStatus(res, 200);
      expect(new Set(racing.map((r) => r.json.refresh_token)).size).toBe(8);
    });

    it('signs in with a pushed request (RFC 9126) whose request_uri one of eight concurrent uses gets', async () => {
      const as = await discover(s);
      const { url, verifier, state } = await authorizationUrl(as, client.client_id);
      const { client_id: _, ...pushedParams } = Object.fromEntries(url.searchParams);
      const pushed = await postForm(s, '/oauth2/par', client, pushedParams);
      await expectStatus(pushed, 201);
      const byReference = new URL(as.authorization_endpoint!);
      byReference.search = new URLSearchParams({
        client_id: client.client_id,
        request_uri: String(pushed.json.request_uri),
      }).toString();
      // Concurrent uses: one opens the login, the others are the invalid_request_uri page.
      const racing = await Promise.all(
        Array.from({ length: 8 }, () => fetch(byReference, { redirect: 'manual' })),
      );
      expect(racing.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
      // A second pushed request goes through the login to a code.
      const again = await postForm(s, '/oauth2/par', client, pushedParams);
      byReference.searchParams.set('request_uri', String(again.json.request_uri));
      const person = await s.person();
      const callback = await loginByHttp(s, byReference, person.handle.value, person.password);
      expect(callback.searchParams.get('state')).toBe(state);
      const res = await exchange(s, client, callback.searchParams.get('code')!, verifier);
      await expectStatus(res, 200);
    });

    it('of two concurrent exchanges of one code, leaves no token standing', async () => {
      const { code, verifier } = await obtainCode(s, client);
      const both = await Promise.all([
        exchange(s, client, code, verifier),
        exchange(s, client, code, verifier),
      ]);
      const ok = both.filter((r) => r.status === 200);
      expect(ok.length).toBeLessThanOrEqual(1);
      for (const res of both.filter((r) => r.status !== 200))
        await expectOAuthError(res, 400, 'invalid_grant');
      for (const res of ok) {
        await expectOAuthError(
          await refresh(s, client, String(res.json.refresh_token)),
          400,
          'invalid_grant',
        );
        expect(await introspect(String(res.json.access_token))).toEqual({ active: false });
      }
    });

    it('answers no tokens to a refresh that a revocation under way overtakes, and revokes what it signed', async () => {
      const { code, verifier } = await obtainCode(s, client);
      const tokens = (await exchange(s, client, code, verifier)).json;
      const hash = await digest(String(tokens.refresh_token));
      const sql = postgres(DATABASE_URL, { max: 2, onnotice: () => {}, connection: { search_path: schema } });
      try {
        let refreshed: ReturnType<typeof refresh> | undefined;
        // A revocation under way: the grant's row updated and locked, not yet committed. The refresh spends
        // its token (the revocation is not visible yet), records its new tokens, then reads the grant back
        // and must wait for this transaction rather than answer tokens of a grant being revoked.
        await sql.begin(async (tx) => {
          await tx`update oauth2_authorize_families set revoked_at = ${Date.now()}
                   where family_id = (select family_id from oauth2_authorize_refresh_tokens where token_hash = ${hash})`;
          refreshed = refresh(s, client, String(tokens.refresh_token));
          const deadline = Date.now() + 10_000;
          for (;;) {
            const [w] = await sql`select count(*)::int as n from pg_stat_activity
                                  where wait_event_type = 'Lock' and query ilike '%oauth2_authorize_families%'`;
            if (w!.n > 0) break;
            if (Date.now() > deadline) throw new Error('the refresh never waited for the revocation');
            await new Promise((r) => setTimeout(r, 20));
          }
        });
        await expectOAuthError(
          await refreshed!,
          400,
          'invalid_grant',
          /revoked while its tokens were issued/,
        );
        const rows = await sql<{ denied: boolean }[]>`
          select exists (select 1 from oauth2_revoked_tokens v where v.jti::text = r.access_jti) as denied
          from oauth2_authorize_refresh_tokens r
          where r.family_id = (select family_id from oauth2_authorize_refresh_tokens where token_hash = ${hash})
          order by r.spent_at is null`;
        // The exchange's row (its token spent; the revocation here wrote no deny list) and the refresh's.
        expect(rows.map((r) => r.denied)).toEqual([false, true]);
      } finally {
        await sql.end();
      }
    });
  });
}

onPostgres('the authorization endpoint on Postgres with pg-queue');
onPostgres('the authorization endpoint on Postgres with JetStream', uniquePrefix());

refreshChainSuite('one chain per grant after a reuse within the grace window, on Postgres', async (clock) => {
  const pg = await isolatedPostgres('oauth2_chain');
  const s = await startAuthorizeService({ storage: pg.storage, clock });
  return {
    ...s,
    stop: async () => {
      await s.stop();
      await pg.drop();
    },
  };
});
