import type { HostedLoginEmailCodes } from '../../../core/capabilities/hosted-login-email-codes.ts';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { AuthorizeErrors } from '../errors.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from '../store/logins.ts';
import type { createLoginAnswers, LoginAnswer, LoginPage } from './answer.ts';
import { emailCodePage } from './email-code-page.ts';
import type { SignedIn } from './finish.ts';
import { headOf, lookOf } from './page-look.ts';
import { requireLoginClient } from './require-client.ts';
import type { createSessionSignIn } from './session-sign-in.ts';

/** Where the login page's "Email me a sign-in code" and the code page post. */
export const EMAIL_CODE_PATH = '/oauth2/authorize/email-code';
export const EMAIL_CODE_VERIFY_PATH = '/oauth2/authorize/email-code/verify';

const WHY = {
  unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
  otherBrowser:
    'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
};

const NOT_OFFERED = 'Signing in with a code by email is not offered here.';

/**
 * The hosted login's first factor by email (otp_via_email): the login page's button sends a code to the
 * address typed (the same page for an address that names nobody), the code page checks it, and the
 * sign-in goes on as a password's does (the session, the second step when the policy asks for it).
 * The login stays open, bound to the browser, until the right code finishes it.
 */
export function createEmailCodeLogin(deps: {
  server: OAuth2Server;
  logins: LoginStore;
  baseUrl: string;
  emailCodes: () => HostedLoginEmailCodes | undefined;
  /** Whether the organization's policy allows this first factor now (true without the factors plugin). */
  allows: (orgId: string, method: string) => Promise<boolean>;
  answers: ReturnType<typeof createLoginAnswers>;
  sessionSignIn: ReturnType<typeof createSessionSignIn>;
}) {
  const { answers } = deps;
  const action = `${deps.baseUrl}${EMAIL_CODE_VERIFY_PATH}`;
  const resendAction = `${deps.baseUrl}${EMAIL_CODE_PATH}`;

  /** The login of the form, its client, and the capability when the policy offers codes by email. */
  async function open(csrfToken: string, browserHash: string | undefined) {
    const login = requireOpenLogin(await deps.logins.find(csrfToken), browserHash, WHY);
    const client = await requireLoginClient(deps.server, login, answers.answer);
    if (!('clientId' in client)) return { ok: false as const, answer: client };
    const codes = deps.emailCodes();
    const offered = codes && (await deps.allows(login.orgId, 'otp_via_email')) ? codes : undefined;
    return { ok: true as const, login, client, codes: offered };
  }

  async function codePage(
    status: number,
    login: PendingLogin,
    client: OAuthClient,
    input: { csrfToken: string; challengeId: string; handle: string; error?: string },
  ): Promise<LoginPage> {
    const look = lookOf(client.ui, client.name);
    const { head, sources } = await headOf(look);
    return {
      kind: 'page',
      status,
      html: emailCodePage({ ...input, action, resendAction }, look, head),
      sources,
      formTargets: [new URL(login.redirectUri).origin],
    };
  }

  const limited = (page: LoginPage, after: number): LoginAnswer => ({
    ...page,
    headers: { 'retry-after': String(after) },
  });

  /** POST /oauth2/authorize/email-code: sends a code to the address typed, then the code page. */
  async function start(
    form: { csrfToken: string; handle: string },
    browserHash: string | undefined,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const opened = await open(form.csrfToken, browserHash);
    if (!opened.ok) return opened.answer;
    const { login, client, codes } = opened;
    const retry = { clientName: client.name, ui: client.ui, csrfToken: form.csrfToken, handle: form.handle };
    if (!codes) return answers.page(403, login, { ...retry, error: NOT_OFFERED });
    const handle = form.handle.trim();
    if (!handle.includes('@'))
      return answers.page(400, login, { ...retry, error: 'Type your email address to get a sign-in code.' });
    const sent = await codes.send(login.orgId, { type: 'email_address', value: handle }, rc);
    if (sent.ok)
      return codePage(200, login, client, {
        csrfToken: form.csrfToken,
        challengeId: sent.challengeId,
        handle,
      });
    if (sent.reason === 'rate_limited')
      return limited(
        await answers.page(429, login, {
          ...retry,
          error: `Too many codes asked for. Try again in ${sent.retryAfter} seconds.`,
        }),
        sent.retryAfter,
      );
    return answers.page(400, login, { ...retry, error: 'No code could be sent to this address.' });
  }

  /** POST /oauth2/authorize/email-code/verify: the code; a right one finishes the login as a password does. */
  async function verify(
    form: { csrfToken: string; challengeId: string; code: string; handle?: string },
    browserHash: string | undefined,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const opened = await open(form.csrfToken, browserHash);
    if (!opened.ok) return opened.answer;
    const { login, client, codes } = opened;
    if (!codes)
      return answers.page(403, login, {
        clientName: client.name,
        ui: client.ui,
        csrfToken: form.csrfToken,
        error: NOT_OFFERED,
      });
    const checked = await codes.check(login.orgId, form.challengeId, form.code, rc);
    if (!checked.ok) {
      const again = { csrfToken: form.csrfToken, challengeId: form.challengeId, handle: form.handle ?? '' };
      if (checked.reason === 'rate_limited')
        return limited(
          await codePage(429, login, client, {
            ...again,
            error:
              checked.retryAfter > 0
                ? `Too many attempts. Try again in ${checked.retryAfter} seconds.`
                : 'Too many wrong codes. Ask for a new code.',
          }),
          checked.retryAfter,
        );
      return codePage(401, login, client, {
        ...again,
        error: 'That code is not right, or it has expired. Try again, or ask for a new code.',
      });
    }
    // One right code finishes a login; a second (a double click) finds it used.
    if (!(await deps.logins.finish(form.csrfToken)))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
    const who: SignedIn = {
      personId: checked.personId,
      method: 'otp_via_email',
      authentication: checked.authentication,
    };
    const signed = await deps.sessionSignIn.signedIn(login, client, who, rc);
    return signed.ok ? signed.answer : answers.answer(login, deps.sessionSignIn.refusedByHook(login));
  }

  return { start, verify };
}
