import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
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
import { deleteStreams, isolatedPostgres, NATS_URL, uniquePrefix } from './support.ts';

/** The suite on a Postgres schema of its own, with pg-queue or (given a stream prefix) JetStream. */
function onPostgres(title: string, streamPrefix?: string) {
  describe(title, () => {
    let s: AuthorizeService;
    let client: MadeClient;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      const pg = await isolatedPostgres('oauth2_authorize');
      drop = pg.drop;
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
  });
}

onPostgres('the authorization endpoint on Postgres with pg-queue');
onPostgres('the authorization endpoint on Postgres with JetStream', uniquePrefix());
