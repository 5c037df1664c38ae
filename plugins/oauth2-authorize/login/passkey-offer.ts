import type {
  HostedLoginPasskeys,
  PasskeyCeremony,
} from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret } from '../../../core/ids.ts';
import { AuthorizeErrors } from '../errors.ts';
import { digest } from '../store/digest.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer, LoginPage } from './answer.ts';
import { headOf, lookOf } from './page-look.ts';
import { passkeyOfferPage } from './passkey-page.ts';
import { credentialJson } from './passkey-sign-in.ts';
import { requireLoginClient } from './require-client.ts';
import type { SessionSignIn } from './session-sign-in.ts';

export interface PasskeyOfferDeps {
  server: OAuth2Server;
  logins: LoginStore;
  passkeys: () => HostedLoginPasskeys | undefined;
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer;
  baseUrl: string;
  /** The CSP source of the passkey script. */
  passkeyScript: string;
}

/**
 * "Add a passkey?" after a sign-in by another factor, when the organization's policy allows passkeys
 * and the person has none. Like the consent page, it is a fresh login of the same request bound to the
 * new session's cookie, and the code is issued once it is answered (from the session, exactly once:
 * the login is finished by the first answer).
 */
export function createPasskeyOffer(deps: PasskeyOfferDeps) {
  const action = `${deps.baseUrl}/oauth2/authorize/passkey/offer`;
  const host = new URL(deps.baseUrl).hostname;
  const onIpAddress = /^[0-9.]+$/.test(host) || host.startsWith('[');

  async function page(
    status: number,
    login: PendingLogin,
    client: OAuthClient,
    csrfToken: string,
    ceremony: PasskeyCeremony,
    error?: string,
  ): Promise<LoginPage> {
    const look = lookOf(client.ui, client.name);
    const { head, sources } = await headOf(look);
    return {
      kind: 'page',
      status,
      html: passkeyOfferPage({ clientName: client.name, action, csrfToken, ceremony, error }, look, head),
      sources: { ...sources, scripts: [deps.passkeyScript] },
      formTargets: [new URL(login.redirectUri).origin],
    };
  }

  /**
   * Whether to offer a passkey after a sign-in by `method`: the passkeys plugin decides (the setting,
   * the policy, the person's passkeys and "Not now"). Never after a passkey, nor on pages served from
   * an IP address (WebAuthn has no relying party there).
   */
  async function wanted(orgId: string, personId: string, method: string): Promise<boolean> {
    const passkeys = deps.passkeys();
    if (!passkeys || method === 'webauthn' || onIpAddress) return false;
    return passkeys.offerWanted(orgId, personId);
  }

  /** The offer page, answered by the browser holding the session (cookie value `secret`). */
  async function ask(
    login: PendingLogin,
    client: OAuthClient,
    session: { sessionId: string; secret: string; personId: string },
    headers: Record<string, string>,
  ): Promise<LoginAnswer | undefined> {
    const ceremony = await deps.passkeys()?.registrationOptions(login.orgId, session.personId);
    if (!ceremony) return undefined;
    const loginId = randomSecret('');
    await deps.logins.open(loginId, session.secret, { ...login, sessionId: session.sessionId });
    return { ...(await page(200, login, client, loginId, ceremony)), headers };
  }

  /** POST /oauth2/authorize/passkey/offer: `add` (with the new passkey) or `skip`; then the code. */
  async function answer(
    form: { csrfToken: string; decision: 'add' | 'skip'; challengeId?: string; response?: string },
    sessionSecretOf: (orgId: string) => string | undefined,
    rc: RequestContext,
    sessionSignIn: SessionSignIn,
  ): Promise<LoginAnswer> {
    const found = await deps.logins.find(form.csrfToken);
    const secret = found.kind === 'open' ? sessionSecretOf(found.login.orgId) : undefined;
    const login = requireOpenLogin(found, secret && (await digest(secret)), {
      unknown: 'this offer was never made here (csrf_token names no sign-in under way)',
      otherBrowser:
        'the answer was not sent by the browser signed in when it was made (its session cookie is missing or another)',
    });
    const session = await sessionSignIn.live(login.orgId, secret);
    if (!session || session.sessionId !== login.sessionId)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(
        'the sign-in session this offer was made in has ended: start again from the application',
      );
    const client = await requireLoginClient(deps.server, login, deps.answer);
    if (!('clientId' in client)) return client;
    const passkeys = deps.passkeys();
    if (form.decision === 'add' && passkeys) {
      const added = await passkeys.register(
        login.orgId,
        session.personId,
        form.challengeId ?? '',
        credentialJson(form.response ?? ''),
      );
      if (!added.ok) {
        // The page again with a fresh ceremony; "Not now" still continues.
        const ceremony = await passkeys.registrationOptions(login.orgId, session.personId);
        if (ceremony) return page(400, login, client, form.csrfToken, ceremony, added.message);
      }
    }
    // One answer per page: a second (a double click, a replay) finds it used, and no second code.
    if (!(await deps.logins.finish(form.csrfToken)))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this offer has already been answered');
    // "Not now" is remembered for the person: the next sign-ins do not ask again.
    if (form.decision === 'skip') await passkeys?.declineOffer(login.orgId, session.personId);
    return sessionSignIn.silent(login, client, session, rc);
  }

  return { wanted, ask, answer };
}

export type PasskeyOffer = ReturnType<typeof createPasskeyOffer>;
