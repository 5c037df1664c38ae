import type { OAuth2Server, OAuthClient } from '../../core/capabilities/oauth2-server.ts';
import type {
  SsoAuthenticator,
  SsoStartRefusal,
  SsoStoredSignIn,
} from '../../core/capabilities/sso-authenticator.ts';
import type { RequestContext } from '../../core/http/sign-in-context.ts';
import { randomSecret } from '../../core/ids.ts';
import { AuthorizeErrors } from './errors.ts';
import type { LoginAnswer, LoginPage } from './login/answer.ts';
import type { Minted, SignedIn, StoredSignedIn } from './login/finish.ts';
import type { LoginPageInput } from './login/page.ts';
import { requireLoginClient } from './login/require-client.ts';
import { digest } from './store/digest.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from './store/logins.ts';

/** What the SSO part of the hosted login borrows from the login: its page, its redirect, mint and grant. */
export interface SsoLoginDeps {
  server: OAuth2Server;
  logins: LoginStore;
  authenticator: () => SsoAuthenticator | undefined;
  /** A credential's own callback, `${PUBLIC_BASE_URL}/oauth2/authorize/sso/callback/{callback_id}`. */
  callbackUrl: (callbackId: string) => string;
  page: (
    status: number,
    login: Pick<PendingLogin, 'orgId' | 'redirectUri'>,
    input: Omit<LoginPageInput, 'action' | 'ssoAction' | 'choices'>,
  ) => Promise<LoginPage>;
  answer: (redirectUri: string, params: Record<string, string | undefined>) => LoginAnswer;
  mint: (login: PendingLogin, client: OAuthClient, who: SignedIn, rc: RequestContext) => Promise<Minted>;
  grant: (
    login: PendingLogin,
    client: OAuthClient,
    minted: Extract<Minted, { ok: true }>,
    rc: RequestContext,
  ) => Promise<LoginAnswer>;
}

/** What the page says for a provider answer used before. */
const REPLAYED =
  'This sign-in link from the provider was already used (a reload or the back button). Sign in again.';

/** What a person reads for a provider sign-in that failed, by AuthenticationFailed_v1's reason. */
const MESSAGES: Record<string, string> = {
  unverified_email:
    'The provider does not say your email address is verified, so it cannot be linked to an account here.',
  no_email: 'The provider gave no email address.',
  replayed_state: REPLAYED,
  expired_state: 'The sign-in at the provider took too long. Start it again.',
  bad_id_token: 'The answer from the provider could not be verified.',
  issuer_mismatch: 'The answer did not come from the sign-in provider the sign-in was sent to.',
  provider_error: 'The provider could not complete the sign-in.',
  person_disabled: 'This account is disabled.',
  not_enabled: 'This sign-in provider is no longer offered here.',
  unverified_handle:
    'The account with this email address has not verified it, so this sign-in cannot be linked to it.',
  token_not_issued: 'The sign-in could not be completed. Sign in again.',
};

/**
 * SSO inside the hosted login: a button (or `idp`) starts the provider sign-in bound to the pending
 * login (the digest of its ID), and the provider's answer finishes that login only, from the browser
 * that opened it. A failed answer burns the login and opens a fresh one for the same authorization
 * request, so the page shows again with a new CSRF token and the message.
 */
export function createSsoLogin(deps: SsoLoginDeps) {
  const { logins } = deps;

  /** The provider's URL for a login and credential, or why not. */
  async function begin(
    orgId: string,
    loginId: string,
    credential: string,
  ): Promise<{ ok: true; url: string } | SsoStartRefusal> {
    const authenticator = deps.authenticator();
    if (!authenticator)
      return { ok: false, reason: 'not_enabled', message: 'single sign-on is not offered here' };
    return authenticator.start(orgId, credential, {
      binding: await digest(loginId),
      callbackUrl: deps.callbackUrl,
    });
  }

  /** The open login of this digest, sent by the browser that opened it; else an error page. */
  async function openLogin(loginHash: string, browserHash: string | undefined) {
    return requireOpenLogin(await logins.findHashed(loginHash), browserHash, {
      unknown: 'this sign-in was never started here',
      otherBrowser:
        'the sign-in was not continued by the browser that opened it (its cookie is missing or another)',
    });
  }

  /** The client of a login as it is now: see requireLoginClient. */
  const clientOf = (login: PendingLogin): Promise<OAuthClient | LoginAnswer> =>
    requireLoginClient(deps.server, login, deps.answer);

  /** The page again for the same authorization request: a fresh login (the old one is burnt). */
  async function again(login: PendingLogin, client: OAuthClient, browser: string, error: string) {
    const loginId = randomSecret('');
    await logins.open(loginId, browser, login);
    return deps.page(400, login, { clientName: client.name, ui: client.ui, csrfToken: loginId, error });
  }

  /**
   * A provider answer used before (a reload, the back button, a copied URL): AuthenticationFailed_v1
   * with replayed_state is out already. While the authorization request it was bound to has not
   * expired, the browser that opened it gets the page again for it, with a fresh login; the old login
   * is finished, so the answer never finishes anything.
   */
  async function replayed(loginHash: string, browser: string | undefined): Promise<LoginAnswer> {
    const found = await logins.requestOfHashed(loginHash);
    if (!found)
      throw AuthorizeErrors.LOGIN_NOT_FOUND(
        'this answer from the provider was already used, and the sign-in it belonged to has expired',
      );
    if (browser === undefined || (await digest(browser)) !== found.browserHash)
      throw AuthorizeErrors.LOGIN_NOT_FOUND(
        'this answer from the provider was already used; start the sign-in again from the application',
      );
    await logins.finishHashed(loginHash);
    const client = await clientOf(found.login);
    if (!('clientId' in client)) return client;
    return again(found.login, client, browser, REPLAYED);
  }

  return {
    begin,

    /** POST /oauth2/authorize/sso: a button of the page; the caller has checked the Origin. */
    async choose(
      form: { csrfToken: string; credential: string },
      browser: string | undefined,
    ): Promise<LoginAnswer> {
      const login = await openLogin(await digest(form.csrfToken), browser && (await digest(browser)));
      const client = await clientOf(login);
      if (!('clientId' in client)) return client;
      const started = await begin(login.orgId, form.csrfToken, form.credential);
      if (started.ok) return { kind: 'redirect', location: started.url };
      return deps.page(400, login, {
        clientName: client.name,
        ui: client.ui,
        csrfToken: form.csrfToken,
        error:
          started.reason === 'not_enabled'
            ? 'This sign-in provider is not offered here.'
            : `The sign-in provider cannot be reached now: ${started.message}`,
      });
    },

    /**
     * GET /oauth2/authorize/sso/callback/{callback_id}: the provider's answer finishes the login it was
     * bound to, when it comes back to the redirect URI of the credential the login started with.
     */
    async callback(
      params: URLSearchParams,
      callbackId: string,
      browser: string | undefined,
      rc: RequestContext,
    ) {
      const authenticator = deps.authenticator();
      if (!authenticator) throw AuthorizeErrors.LOGIN_NOT_FOUND('single sign-on is not offered here');
      const browserHash = browser && (await digest(browser));
      // The login is checked before the provider's code is exchanged: an answer sent by another browser
      // (a login CSRF, a link opened elsewhere) creates no person and signs nobody in.
      let refused: unknown;
      let accepted: PendingLogin | undefined;
      const accept = async (binding: string) => {
        try {
          accepted = await openLogin(binding, browserHash);
          return undefined;
        } catch (e) {
          refused = e;
          return e instanceof Error ? e.message : 'the sign-in cannot be continued here';
        }
      };
      const done = await authenticator.finish(params, rc, { callbackId, accept });
      if (refused !== undefined) throw refused;
      // No organization, no authorization request to go back to: only a page can say so.
      if (done.binding === undefined)
        throw AuthorizeErrors.LOGIN_NOT_FOUND(
          !done.ok && done.reason === 'unknown_callback'
            ? 'no SSO credential has this redirect URI (it may have been deleted), so there is no sign-in to continue'
            : 'state: no sign-in with a provider was started here with this state, so there is no sign-in to continue',
        );
      // Another credential's state (RFC 9700 section 4.4, mix-up): reported, nothing redeemed, and
      // nothing continued, not even the login it was bound to: this answer is not its provider's.
      if (!done.ok && done.reason === 'wrong_callback')
        throw AuthorizeErrors.LOGIN_FORBIDDEN(
          "the provider's answer came back to another SSO credential's redirect URI than the one this sign-in was started for; nothing was redeemed. Start the sign-in again from the application",
        );
      if (!done.ok && done.reason === 'replayed_state') return replayed(done.binding, browser);
      const loginHash = done.binding;
      // Read once: by the check above when the state was fresh, else here.
      const login = accepted ?? (await openLogin(loginHash, browserHash));
      const client = await clientOf(login);
      if (!('clientId' in client)) return client;
      // One answer finishes a login; a second (another tab's) finds it used.
      if (!(await logins.finishHashed(loginHash)))
        throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
      if (!done.ok) {
        // The person said no at the provider: the client hears it, as RFC 6749 §4.1.2.1 says.
        if (done.reason === 'access_denied')
          return deps.answer(login.redirectUri, {
            error: 'access_denied',
            error_description: 'the person did not allow the sign-in at the provider',
            state: login.state,
          });
        return again(login, client, browser ?? '', MESSAGES[done.reason] ?? done.message);
      }
      const signedIn = (d: SsoStoredSignIn): StoredSignedIn => ({
        personId: d.personId,
        method: 'oidc',
        authentication: d.authentication,
        idp: d.provider,
      });
      const { linkStored } = done;
      const who: SignedIn = {
        ...signedIn(done),
        ...(done.prospective ? { prospective: done.prospective } : {}),
        // Another first sign-in of the person stored it meanwhile: this one signs in as that person.
        ...(linkStored && {
          linkStored: async () => {
            const linked = await linkStored();
            return linked.ok ? signedIn(linked) : { failed: MESSAGES[linked.reason] ?? linked.message };
          },
        }),
      };
      const minted = await deps.mint(login, client, who, rc);
      if (!minted.ok) return again(login, client, browser ?? '', minted.message);
      return deps.grant(login, client, minted, rc);
    },
  };
}
