import type {
  EmailSignedIn,
  HostedLoginEmailCodes,
} from '../../../core/capabilities/hosted-login-email-codes.ts';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { AuthorizeErrors } from '../errors.ts';
import { digest } from '../store/digest.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from '../store/logins.ts';
import type { createLoginAnswers, LoginAnswer, LoginPage } from './answer.ts';
import { checkMailPage, linkConfirmedPage, linkConfirmPage, linkRefusedPage } from './email-link-page.ts';
import type { SignedIn } from './finish.ts';
import { headOf, lookOf } from './page-look.ts';
import { requireLoginClient } from './require-client.ts';
import type { createSessionSignIn } from './session-sign-in.ts';

/** Where the login page's "Email me a sign-in link" posts (and "Send a new link"). */
export const EMAIL_LINK_PATH = '/oauth2/authorize/email-link';
/** Where the check-your-email page's "Continue" posts. */
export const EMAIL_LINK_CONTINUE_PATH = '/oauth2/authorize/email-link/continue';
/** Where the message's link leads (GET, `?token=`) and its page's button posts. */
export const EMAIL_LINK_PAGE_PATH = '/oauth2/authorize/email-link/sign-in';

const WHY = {
  unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
  otherBrowser:
    'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
};

const NOT_OFFERED = 'Signing in with a link by email is not offered here.';
const OVER = 'The sign-in this link was asked for is over (completed, or it took too long). Start again.';

/** A page of the link (no login's look: the message's link opens it anywhere). */
const linkPage = (status: number, html: string, formTargets: string[] = [], after?: number): LoginPage => ({
  kind: 'page',
  status,
  html,
  formTargets,
  ...(after !== undefined ? { headers: { 'retry-after': String(after) } } : {}),
});

/**
 * The hosted login's email_link: the login page's button sends a link bound to this login (the digest
 * of its ID) to the address typed, and its window shows "check your email". The link's page asks for a
 * button press (a mail scanner's GET signs nobody in). Pressed in the login's own browser (its binding
 * cookie), it finishes the login there; pressed elsewhere, it confirms the link, and the login's
 * window's "Continue" finishes it. Either way the sign-in goes on as a password's does.
 */
export function createEmailLinkLogin(deps: {
  server: OAuth2Server;
  logins: LoginStore;
  baseUrl: string;
  emailCodes: () => HostedLoginEmailCodes | undefined;
  /** Whether the organization's policy allows this first factor now (true without the factors plugin). */
  allows: (orgId: string, method: string) => Promise<boolean>;
  answers: ReturnType<typeof createLoginAnswers>;
  sessionSignIn: ReturnType<typeof createSessionSignIn>;
}) {
  const { answers, logins } = deps;
  const continueAction = `${deps.baseUrl}${EMAIL_LINK_CONTINUE_PATH}`;
  const resendAction = `${deps.baseUrl}${EMAIL_LINK_PATH}`;
  const pageAction = `${deps.baseUrl}${EMAIL_LINK_PAGE_PATH}`;

  /** The login of the form, its client, and the capability when the policy offers links by email. */
  async function open(csrfToken: string, browserHash: string | undefined) {
    const login = requireOpenLogin(await logins.find(csrfToken), browserHash, WHY);
    const client = await requireLoginClient(deps.server, login, answers.answer);
    if (!('clientId' in client)) return { ok: false as const, answer: client };
    const codes = deps.emailCodes();
    const offered = codes && (await deps.allows(login.orgId, 'email_link')) ? codes : undefined;
    return { ok: true as const, login, client, links: offered };
  }

  async function checkMail(
    status: number,
    login: PendingLogin,
    client: OAuthClient,
    input: { csrfToken: string; challengeId: string; handle: string; error?: string; note?: string },
  ): Promise<LoginPage> {
    const look = lookOf(client.ui, client.name);
    const { head, sources } = await headOf(look);
    return {
      kind: 'page',
      status,
      html: checkMailPage({ ...input, continueAction, resendAction }, look, head),
      sources,
      formTargets: [new URL(login.redirectUri).origin],
    };
  }

  /** The sign-in goes on as a password's: the session, the second step, the code for the client. */
  async function signIn(
    login: PendingLogin,
    client: OAuthClient,
    used: EmailSignedIn,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const who: SignedIn = {
      personId: used.personId,
      method: 'email_link',
      authentication: used.authentication,
    };
    const signed = await deps.sessionSignIn.signedIn(login, client, who, rc);
    return signed.ok ? signed.answer : answers.answer(login, deps.sessionSignIn.refusedByHook(login));
  }

  /** The open login a link was sent for, with its client; undefined once it is over. */
  async function loginOfLink(link: { orgId: string; binding: string }) {
    const found = await logins.findHashed(link.binding);
    if (found.kind !== 'open' || found.login.orgId !== link.orgId) return undefined;
    const client = await requireLoginClient(deps.server, found.login, answers.answer);
    if (!('clientId' in client)) return undefined;
    return { login: found.login, browserHash: found.browserHash, client };
  }

  return {
    /** POST /oauth2/authorize/email-link: sends a link bound to this login, then "check your email". */
    async start(
      form: { csrfToken: string; handle: string },
      browserHash: string | undefined,
      rc: RequestContext,
    ): Promise<LoginAnswer> {
      const opened = await open(form.csrfToken, browserHash);
      if (!opened.ok) return opened.answer;
      const { login, client, links } = opened;
      const retry = {
        clientName: client.name,
        ui: client.ui,
        csrfToken: form.csrfToken,
        handle: form.handle,
      };
      if (!links) return answers.page(403, login, { ...retry, error: NOT_OFFERED });
      const handle = form.handle.trim();
      if (!handle.includes('@'))
        return answers.page(400, login, {
          ...retry,
          error: 'Type your email address to get a sign-in link.',
        });
      const sent = await links.sendLink(login.orgId, { type: 'email_address', value: handle }, rc, {
        binding: await digest(form.csrfToken),
        linkUrl: pageAction,
      });
      if (sent.ok)
        return checkMail(200, login, client, {
          csrfToken: form.csrfToken,
          challengeId: sent.challengeId,
          handle,
        });
      if (sent.reason === 'rate_limited')
        return {
          ...(await answers.page(429, login, {
            ...retry,
            error: `Too many links asked for. Try again in ${sent.retryAfter} seconds.`,
          })),
          headers: { 'retry-after': String(sent.retryAfter) },
        };
      return answers.page(400, login, { ...retry, error: 'No link could be sent to this address.' });
    },

    /** POST /oauth2/authorize/email-link/continue: the login's window, once the link was pressed elsewhere. */
    async continue(
      form: { csrfToken: string; challengeId: string; handle: string },
      browserHash: string | undefined,
      rc: RequestContext,
    ): Promise<LoginAnswer> {
      const opened = await open(form.csrfToken, browserHash);
      if (!opened.ok) return opened.answer;
      const { login, client, links } = opened;
      const again = { csrfToken: form.csrfToken, challengeId: form.challengeId, handle: form.handle };
      if (!links)
        return answers.page(403, login, {
          clientName: client.name,
          ui: client.ui,
          csrfToken: form.csrfToken,
          error: NOT_OFFERED,
        });
      const used = await links.useLink(login.orgId, form.challengeId, await digest(form.csrfToken), rc);
      if (!used.ok) {
        if (used.reason === 'pending') return checkMail(200, login, client, { ...again, note: used.message });
        if (used.reason === 'rate_limited')
          return {
            ...(await checkMail(429, login, client, {
              ...again,
              error: `Too many attempts. Try again in ${used.retryAfter} seconds.`,
            })),
            headers: { 'retry-after': String(used.retryAfter) },
          };
        return checkMail(401, login, client, {
          ...again,
          error: 'This link cannot sign you in (used, expired or unknown). Ask for a new link.',
        });
      }
      if (!(await logins.finish(form.csrfToken)))
        throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
      return signIn(login, client, used, rc);
    },

    /** GET /oauth2/authorize/email-link/sign-in: the link's page (one button; opening it uses nothing). */
    async page(token: string, formToken: string, rc: RequestContext): Promise<LoginPage> {
      const links = deps.emailCodes();
      if (!links) return linkPage(404, linkRefusedPage(NOT_OFFERED));
      const opened = await links.openLink(token, rc);
      if (!opened.ok)
        return opened.reason === 'rate_limited'
          ? linkPage(429, linkRefusedPage(opened.message), [], opened.retryAfter)
          : linkPage(400, linkRefusedPage(opened.message));
      const of = await loginOfLink(opened.link);
      if (!of) return linkPage(400, linkRefusedPage(OVER));
      const html = linkConfirmPage({
        organization: of.client.name,
        link: opened.link,
        token,
        formToken,
        action: pageAction,
      });
      // The button's answer may be the redirect to the client.
      return linkPage(200, html, [new URL(of.login.redirectUri).origin]);
    },

    /**
     * POST /oauth2/authorize/email-link/sign-in: the link's button. In the login's own browser the login
     * finishes here; in another, the link is confirmed for the login's window.
     */
    async press(token: string, browserHash: string | undefined, rc: RequestContext): Promise<LoginAnswer> {
      const links = deps.emailCodes();
      if (!links) return linkPage(404, linkRefusedPage(NOT_OFFERED));
      const opened = await links.openLink(token, rc);
      if (!opened.ok)
        return opened.reason === 'rate_limited'
          ? linkPage(429, linkRefusedPage(opened.message), [], opened.retryAfter)
          : linkPage(400, linkRefusedPage(opened.message));
      const { link } = opened;
      const of = await loginOfLink(link);
      if (!of) return linkPage(400, linkRefusedPage(OVER));
      if (browserHash === undefined || browserHash !== of.browserHash) {
        const confirmed = await links.confirmLink(token, rc);
        return confirmed.ok
          ? linkPage(200, linkConfirmedPage(of.client.name))
          : linkPage(400, linkRefusedPage(confirmed.message));
      }
      const used = await links.useLinkHere(token, link.binding, rc);
      if (!used.ok)
        return used.reason === 'rate_limited'
          ? linkPage(429, linkRefusedPage(used.message), [], used.retryAfter)
          : linkPage(400, linkRefusedPage(used.message));
      if (!(await logins.finishHashed(link.binding)))
        throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
      return signIn(of.login, of.client, used, rc);
    },
  };
}

export type EmailLinkLogin = ReturnType<typeof createEmailLinkLogin>;
