import type {
  HostedLogin,
  HostedLoginSignIn,
  HostedLoginSso,
} from '../../../core/capabilities/hosted-login-sso.ts';
import type { SsoAuthenticator, SsoStoredSignIn } from '../../../core/capabilities/sso-authenticator.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { credentialRedirectUri, HOSTED_LOGIN_CALLBACK_PATH } from '../../../core/sso/redirect-uris.ts';

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
export function createHostedLoginSso(deps: {
  authenticator: SsoAuthenticator;
  /** PUBLIC_BASE_URL: a credential's own callback is `${baseUrl}/oauth2/authorize/sso/callback/{callback_id}`. */
  baseUrl: string;
}): HostedLoginSso {
  const { authenticator } = deps;
  const callbackUrl = (callbackId: string) =>
    credentialRedirectUri(deps.baseUrl, HOSTED_LOGIN_CALLBACK_PATH, callbackId);

  /** The provider's URL for a login and credential, or why not. */
  async function begin<L, C, A>(
    hosted: HostedLogin<L, C, A>,
    orgId: string,
    loginId: string,
    credential: string,
  ) {
    return authenticator.start(orgId, credential, { binding: await hosted.digest(loginId), callbackUrl });
  }

  /** The open login of this digest, sent by the browser that opened it; else an error page. */
  function openLogin<L, C, A>(
    hosted: HostedLogin<L, C, A>,
    loginHash: string,
    browserHash: string | undefined,
  ) {
    return hosted.open(loginHash, browserHash, {
      unknown: 'this sign-in was never started here',
      otherBrowser:
        'the sign-in was not continued by the browser that opened it (its cookie is missing or another)',
    });
  }

  /**
   * A provider answer used before (a reload, the back button, a copied URL): AuthenticationFailed_v1
   * with replayed_state is out already. While the authorization request it was bound to has not
   * expired, the browser that opened it gets the page again for it, with a fresh login; the old login
   * is finished, so the answer never finishes anything.
   */
  async function replayed<L, C, A>(
    hosted: HostedLogin<L, C, A>,
    loginHash: string,
    browser: string | undefined,
  ): Promise<A> {
    const found = await hosted.request(loginHash);
    if (!found)
      throw hosted.notFound(
        'this answer from the provider was already used, and the sign-in it belonged to has expired',
      );
    if (browser === undefined || (await hosted.digest(browser)) !== found.browserHash)
      throw hosted.notFound(
        'this answer from the provider was already used; start the sign-in again from the application',
      );
    await hosted.finish(loginHash);
    const client = await hosted.client(found.login);
    if (!client.ok) return client.answer;
    return hosted.reopen(found.login, client.client, browser, REPLAYED);
  }

  return {
    choices: (orgId) => authenticator.choices(orgId),

    begin,

    /** POST /oauth2/authorize/sso: a button of the page; the caller has checked the Origin. */
    async choose<L, C, A>(
      hosted: HostedLogin<L, C, A>,
      form: { csrfToken: string; credential: string },
      browser: string | undefined,
    ): Promise<A> {
      const login = await openLogin(
        hosted,
        await hosted.digest(form.csrfToken),
        browser && (await hosted.digest(browser)),
      );
      const client = await hosted.client(login);
      if (!client.ok) return client.answer;
      const started = await begin(hosted, hosted.organization(login), form.csrfToken, form.credential);
      if (started.ok) return hosted.redirect(started.url);
      return hosted.retry(
        login,
        client.client,
        form.csrfToken,
        started.reason === 'not_enabled'
          ? 'This sign-in provider is not offered here.'
          : `The sign-in provider cannot be reached now: ${started.message}`,
      );
    },

    /**
     * GET /oauth2/authorize/sso/callback/{callback_id}: the provider's answer finishes the login it was
     * bound to, when it comes back to the redirect URI of the credential the login started with.
     */
    async callback<L, C, A>(
      hosted: HostedLogin<L, C, A>,
      params: URLSearchParams,
      callbackId: string,
      browser: string | undefined,
      rc: RequestContext,
    ): Promise<A> {
      const browserHash = browser && (await hosted.digest(browser));
      // The login is checked before the provider's code is exchanged: an answer sent by another browser
      // (a login CSRF, a link opened elsewhere) creates no person and signs nobody in.
      let refused: unknown;
      let accepted: L | undefined;
      const accept = async (binding: string) => {
        try {
          accepted = await openLogin(hosted, binding, browserHash);
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
        throw hosted.notFound(
          !done.ok && done.reason === 'unknown_callback'
            ? 'no SSO credential has this redirect URI (it may have been deleted), so there is no sign-in to continue'
            : 'state: no sign-in with a provider was started here with this state, so there is no sign-in to continue',
        );
      // Another credential's state (RFC 9700 section 4.4, mix-up): reported, nothing redeemed, and
      // nothing continued, not even the login it was bound to: this answer is not its provider's.
      if (!done.ok && done.reason === 'wrong_callback')
        throw hosted.forbidden(
          "the provider's answer came back to another SSO credential's redirect URI than the one this sign-in was started for; nothing was redeemed. Start the sign-in again from the application",
        );
      if (!done.ok && done.reason === 'replayed_state') return replayed(hosted, done.binding, browser);
      const loginHash = done.binding;
      // Read once: by the check above when the state was fresh, else here.
      const login = accepted ?? (await openLogin(hosted, loginHash, browserHash));
      const found = await hosted.client(login);
      if (!found.ok) return found.answer;
      const { client } = found;
      // One answer finishes a login; a second (another tab's) finds it used.
      if (!(await hosted.finish(loginHash))) throw hosted.notFound('this sign-in has already been completed');
      if (!done.ok) {
        // The person said no at the provider: the client hears it, as RFC 6749 §4.1.2.1 says.
        if (done.reason === 'access_denied')
          return hosted.refuse(
            login,
            'access_denied',
            'the person did not allow the sign-in at the provider',
          );
        return hosted.reopen(login, client, browser ?? '', MESSAGES[done.reason] ?? done.message);
      }
      const signedIn = (d: SsoStoredSignIn): Omit<HostedLoginSignIn, 'prospective' | 'linkStored'> => ({
        personId: d.personId,
        method: 'oidc',
        authentication: d.authentication,
        idp: d.provider,
      });
      const { linkStored } = done;
      const who: HostedLoginSignIn = {
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
      const signed = await hosted.signIn(login, client, who, rc);
      if (!signed.ok) return hosted.reopen(login, client, browser ?? '', signed.message);
      return signed.answer;
    },
  };
}
