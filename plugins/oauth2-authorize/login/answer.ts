import type { HostedLoginPasskeys } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { HostedLoginSso } from '../../../core/capabilities/hosted-login-sso.ts';
import type { SsoChoice } from '../../../core/capabilities/sso-authenticator.ts';
import type { PageSources } from '../../../core/http/hosted-page.ts';
import { redirectTo } from '../authorize/request.ts';
import type { PendingLogin } from '../store/logins.ts';
import { EMAIL_CODE_PATH } from './email-code-login.ts';
import { EMAIL_LINK_PATH } from './email-link-login.ts';
import { formPostPage } from './form-post.ts';
import { type LoginPageInput, loginPage } from './page.ts';
import { headOf, lookOf } from './page-look.ts';

/** A page to answer: the form (again, with why). */
export interface LoginPage {
  kind: 'page';
  status: number;
  html: string;
  /** Origins the form's answer may redirect to (the CSP's form-action). */
  formTargets: string[];
  /** The page's own stylesheet and image origins, for the CSP (the client's hosted-UI configuration). */
  sources?: PageSources;
  headers?: Record<string, string>;
}

/** What the login answers: a page or a redirect (with headers such as the session's cookie). */
export type LoginAnswer =
  | LoginPage
  | { kind: 'redirect'; location: string; headers?: Record<string, string> };

/** Where and how an answer goes back to the client. */
export type AnswerTarget = Pick<PendingLogin, 'redirectUri' | 'responseMode' | 'issuer'>;

/** The origin a redirect URI sends the browser to, for the page's form-action. */
const originOf = (uri: string) => new URL(uri).origin;

/**
 * The login's two answers, the form page and the redirect to the client, with the SSO credentials the
 * page offers.
 */
export function createLoginAnswers(deps: {
  /** PUBLIC_BASE_URL: the form's action, and the `iss` of answers to clients of the deployment's issuer. */
  baseUrl: string;
  /** SSO sign-in, when a plugin provides it (read at each request: capabilities are set up in any order). */
  sso: () => HostedLoginSso | undefined;
  /** The CSP source of the form_post page's script (formPostScriptSource()). */
  formPostScript: string;
  /** Whether the organization's policy allows a first factor now (SSO is `oidc`). */
  allows: (orgId: string, method: string) => Promise<boolean>;
  /** Whether the page offers "Email me a sign-in code" for this organization and client. */
  emailCodeOffered: (orgId: string, ui: LoginPageInput['ui']) => Promise<boolean>;
  /** Whether the page offers "Email me a sign-in link" for this organization and client. */
  emailLinkOffered: (orgId: string, ui: LoginPageInput['ui']) => Promise<boolean>;
  /** Passkeys, when a plugin provides them (read at each request). */
  passkeys: () => HostedLoginPasskeys | undefined;
  /** The CSP source of the passkey script (passkeyScriptSource()). */
  passkeyScript: string;
}) {
  const action = `${deps.baseUrl}/oauth2/authorize/login`;
  const ssoAction = `${deps.baseUrl}/oauth2/authorize/sso`;
  const emailCodeAction = `${deps.baseUrl}${EMAIL_CODE_PATH}`;
  const emailLinkAction = `${deps.baseUrl}${EMAIL_LINK_PATH}`;
  const passkeyAction = `${deps.baseUrl}/oauth2/authorize/passkey`;
  const host = new URL(deps.baseUrl).hostname;
  const onIpAddress = /^[0-9.]+$/.test(host) || host.startsWith('[');

  /** The SSO credentials the organization offers here (none without an SSO plugin, or when its policy leaves oidc out). */
  const choicesOf = async (orgId: string): Promise<SsoChoice[]> => {
    const sso = deps.sso();
    return sso && (await deps.allows(orgId, 'oidc')) ? sso.choices(orgId) : [];
  };

  /** A passkey sign-in's options, when the passkeys plugin is enabled and the policy allows them. */
  const passkeyOf = async (orgId: string) => {
    const passkeys = deps.passkeys();
    // WebAuthn has no relying party on an IP address: pages served from one cannot use passkeys.
    if (onIpAddress || !passkeys || !(await passkeys.allowsFirstFactor(orgId))) return undefined;
    return { ceremony: await passkeys.signInOptions(orgId), action: passkeyAction };
  };

  /**
   * The form, with one button per SSO credential offered. The CSP's form-action lists the client's
   * origin (the password form's answer) and the providers' (an SSO button's answer redirects there).
   */
  const page = async (
    status: number,
    login: Pick<PendingLogin, 'orgId' | 'redirectUri'>,
    input: Omit<
      LoginPageInput,
      'action' | 'ssoAction' | 'choices' | 'emailCodeAction' | 'emailLinkAction' | 'passkey'
    >,
    offered?: SsoChoice[],
  ): Promise<LoginPage> => {
    const choices = offered ?? (await choicesOf(login.orgId));
    const passkey = await passkeyOf(login.orgId);
    const look = lookOf(input.ui, input.clientName);
    const { head, sources } = await headOf(look);
    return {
      kind: 'page',
      status,
      html: loginPage(
        {
          ...input,
          action,
          ssoAction,
          choices,
          passkey,
          ...((await deps.emailCodeOffered(login.orgId, input.ui)) ? { emailCodeAction } : {}),
          ...((await deps.emailLinkOffered(login.orgId, input.ui)) ? { emailLinkAction } : {}),
        },
        look,
        head,
      ),
      sources: passkey ? { ...sources, scripts: [deps.passkeyScript] } : sources,
      formTargets: [
        originOf(login.redirectUri),
        ...new Set(choices.flatMap((c) => (c.origin ? [c.origin] : []))),
      ],
    };
  };

  /**
   * The answer to the client: the code, or an error (RFC 6749 §4.1.2, RFC 9207 iss), in the query of a
   * redirect or, for response_mode=form_post, posted by an auto-submitting page.
   */
  const answer = (to: AnswerTarget, params: Record<string, string | undefined>): LoginAnswer => {
    const all = { ...params, iss: to.issuer ?? deps.baseUrl };
    if (to.responseMode !== 'form_post')
      return { kind: 'redirect', location: redirectTo(to.redirectUri, all) };
    return {
      kind: 'page',
      status: 200,
      html: formPostPage(to.redirectUri, all),
      formTargets: [originOf(to.redirectUri)],
      sources: { scripts: [deps.formPostScript] },
    };
  };

  return { choicesOf, page, answer };
}
