import { afterEach, describe, expect, it } from 'bun:test';
import type { Env } from '../../../core/config.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { bothTestCas, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';
import {
  type AuthorizeService,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  postForm,
  refresh,
} from './fixture.ts';

const OLD = 'correct horse battery staple';
const NEW = 'a new and much better passphrase';
/** A reset link's token: 43 base64url characters after `token=`. */
const TOKEN = /[?&]token=([A-Za-z0-9_-]{43})/;

/**
 * A password reset ends what the person held before it: the authorization server's grants (refresh
 * tokens, access tokens, codes not yet exchanged) and identity tokens, in the reset's transaction;
 * and with PASSWORD_RESET_REVOKE_TOKENS=false it ends nothing. The reset link comes through a real
 * SMTP server on loopback; the OAuth side runs the hosted login and the token endpoint by HTTP.
 * `start` gets the environment to add (the mail transport, the setting).
 */
export function resetRevocationSuite(label: string, start: (env: Env) => Promise<AuthorizeService>) {
  describe(label, () => {
    let s: AuthorizeService | undefined;
    let smtp: TestSmtpServer | undefined;
    afterEach(async () => {
      await s?.stop();
      await smtp?.stop();
      s = smtp = undefined;
    });

    async function setUp(env: Env = {}) {
      smtp = await startSmtpServer();
      s = await start({
        SMTP_URL: smtp.url,
        MAIL_FROM: 'no-reply@ids.test',
        NODE_EXTRA_CA_CERTS: bothTestCas(),
        ...env,
      });
      const client = await s.createClient();
      const made = await s.call('POST', '/persons', {
        body: { handles: [{ type: 'email_address', value: 'ada@example.com' }] },
      });
      await expectStatus(made, 201);
      const personId: string = made.json.result.person_id;
      await expectStatus(
        await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password: OLD } }),
        204,
      );
      return { s, smtp, client, personId };
    }

    type Ctx = Awaited<ReturnType<typeof setUp>>;
    const person = (password: string) => ({ handle: { value: 'ada@example.com' }, password });

    /** Access, refresh and ID token through the hosted login and the code exchange. */
    async function codeFlow(c: Ctx, password: string) {
      const { code, verifier } = await obtainCode(c.s, c.client, {}, person(password));
      const res = await exchange(c.s, c.client, code, verifier);
      await expectStatus(res, 200);
      return res.json as { access_token: string; refresh_token: string };
    }

    /** An identity token from POST /authenticate/password. */
    async function identityToken(c: Ctx, password: string): Promise<string> {
      const res = await c.s.call('POST', '/authenticate/password', {
        key: null,
        body: { handle: { type: 'email_address', value: 'ada@example.com' }, password },
      });
      await expectStatus(res, 200);
      return res.json.result.token;
    }

    /** Asks for a reset, reads the `n`-th message's token and confirms it. */
    async function reset(c: Ctx, n: number, password: string) {
      const asked = await c.s.call('POST', '/authenticate/password/reset', {
        key: null,
        body: { handle: { type: 'email_address', value: 'ada@example.com' } },
      });
      await expectStatus(asked, 202);
      const mail = (await c.smtp.waitFor(n))[n - 1]!;
      const token = TOKEN.exec(mail.parsed.text ?? '')?.[1];
      if (!token) throw new Error(`message ${n} holds no reset link: ${mail.parsed.text}`);
      await expectStatus(
        await c.s.call('POST', '/authenticate/password/reset/confirm', {
          key: null,
          body: { token, password },
        }),
        204,
      );
    }

    const userinfo = (c: Ctx, accessToken: string) =>
      fetch(`${c.s.url}/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    const introspect = async (c: Ctx, client: MadeClient, token: string) =>
      (await postForm(c.s, '/oauth2/tokens/introspect', client, { token })).json;
    const validate = async (c: Ctx, token: string) =>
      (await c.s.call('POST', '/token/validate', { body: { token } })).json.result;

    it("revokes the person's OAuth grants and identity tokens on a reset, not those issued after it", async () => {
      const c = await setUp();
      const identity = await identityToken(c, OLD);
      const before = await codeFlow(c, OLD);
      const waiting = await obtainCode(c.s, c.client, {}, person(OLD));
      await expectStatus(await userinfo(c, before.access_token), 200);

      await reset(c, 1, NEW);
      await expectOAuthError(await refresh(c.s, c.client, before.refresh_token), 400, 'invalid_grant');
      await expectStatus(await userinfo(c, before.access_token), 401);
      expect(await introspect(c, c.client, before.access_token)).toEqual({ active: false });
      expect(await introspect(c, c.client, before.refresh_token)).toEqual({ active: false });
      expect(await validate(c, identity)).toMatchObject({
        valid: false,
        invalidity_reason: 'invalid_token_content',
        invalidity_detail: 'revoked',
      });
      // A code issued before the reset and exchanged after it gives nothing that works.
      const late = await exchange(c.s, c.client, waiting.code, waiting.verifier);
      await expectOAuthError(late, 400, 'invalid_grant');

      // Signed in again with the new password: those tokens work, and the reset verified the email.
      const after = await codeFlow(c, NEW);
      const info = await userinfo(c, after.access_token);
      await expectStatus(info, 200);
      expect(await info.json()).toMatchObject({ email: 'ada@example.com', email_verified: true });
      const refreshed = await refresh(c.s, c.client, after.refresh_token);
      await expectStatus(refreshed, 200);
      const identityAfter = await identityToken(c, NEW);
      expect(await validate(c, identityAfter)).toMatchObject({ valid: true });

      // A second reset moves the person's cutoff forward and ends the grant made between the two.
      await reset(c, 2, OLD);
      await expectOAuthError(
        await refresh(c.s, c.client, String(refreshed.json.refresh_token)),
        400,
        'invalid_grant',
      );
      await expectStatus(await userinfo(c, String(refreshed.json.access_token)), 401);
      expect(await validate(c, identityAfter)).toMatchObject({
        valid: false,
        invalidity_reason: 'invalid_token_content',
        invalidity_detail: 'revoked',
      });
    });

    it('leaves OAuth grants and identity tokens working with PASSWORD_RESET_REVOKE_TOKENS=false', async () => {
      const c = await setUp({ PASSWORD_RESET_REVOKE_TOKENS: 'false' });
      const identity = await identityToken(c, OLD);
      const before = await codeFlow(c, OLD);
      await reset(c, 1, NEW);
      const refreshed = await refresh(c.s, c.client, before.refresh_token);
      await expectStatus(refreshed, 200);
      await expectStatus(await userinfo(c, before.access_token), 200);
      expect(await validate(c, identity)).toMatchObject({ valid: true });
    });
  });
}
