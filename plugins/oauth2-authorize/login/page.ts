// The hosted login page and the error page, in the service's page shell (core/http/hosted-page.ts):
// server-rendered, no script, no external asset, the one stylesheet allowed by its hash.

import type { PasskeyCeremony } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { OAuthClientUiConfiguration } from '../../../core/capabilities/oauth2-server.ts';
import { hostedPage } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import { emailCodeButton, LOGIN_FORM_ID } from './email-code-page.ts';
import { emailLinkButton } from './email-link-page.ts';
import type { PageLook } from './page-look.ts';
import { passkeyForm } from './passkey-page.ts';

export interface LoginPageInput {
  clientName: string;
  /** The client's hosted-UI configuration (its title, logo, texts, handle types); absent: the defaults. */
  ui?: OAuthClientUiConfiguration | undefined;
  /** Where the form posts: PUBLIC_BASE_URL + /oauth2/authorize/login. */
  action: string;
  /** The login's ID: the form's CSRF token, bound to the browser's cookie. */
  csrfToken: string;
  handle?: string | undefined;
  error?: string | undefined;
  /** Where an SSO button posts: PUBLIC_BASE_URL + /oauth2/authorize/sso. */
  ssoAction?: string;
  /** One button per SSO credential offered: the credential's client ID and its name. */
  choices?: readonly { clientId: string; name: string }[];
  /** Where "Email me a sign-in code" sends the handle, when the policy offers it; absent: no button. */
  emailCodeAction?: string | undefined;
  /** Where "Email me a sign-in link" sends the handle, when the policy offers it; absent: no button. */
  emailLinkAction?: string | undefined;
  /** A passkey sign-in's options, when passkeys are offered, and where its answer posts. */
  passkey?: { ceremony: PasskeyCeremony; action: string } | undefined;
}

/** One form per SSO credential: each posts the login's CSRF token and the credential it names. */
function ssoForms(input: LoginPageInput, look: PageLook): string {
  const choices = input.choices ?? [];
  if (!choices.length || !input.ssoAction) return '';
  // split/join, not replace: a name holding "$&" must stay as written.
  const label = (name: string) => look.texts.sso_button.split('{name}').join(name);
  const forms = choices.map(
    (c) => `<form method="post" action="${escapeHtml(input.ssoAction ?? '')}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="credential" value="${escapeHtml(c.clientId)}">
<button type="submit">${escapeHtml(label(c.name))}</button>
</form>`,
  );
  return `\n<section class="sso" aria-label="Single sign-on">\n${forms.join('\n')}\n</section>`;
}

/** The passkey button (and autofill on the handle field), when passkeys are offered. */
const passkeyPart = (input: LoginPageInput) =>
  input.passkey
    ? `\n${passkeyForm({
        action: input.passkey.action,
        csrfToken: input.csrfToken,
        ceremony: input.passkey.ceremony,
        kind: 'get',
        label: 'Sign in with a passkey',
        conditional: true,
      })}`
    : '';

/**
 * The sign-in form: a handle (of the types the client takes) and a password, then one button per SSO
 * credential offered; with the client's title, logo and texts, and a help link beside an error.
 * `look` is lookOf(input.ui), `head` headOf(look): the favicon and the background's stylesheet.
 */
export function loginPage(input: LoginPageInput, look: PageLook, head = ''): string {
  const help = look.supportUrl
    ? `<p class="help"><a href="${escapeHtml(look.supportUrl)}" rel="noreferrer">${escapeHtml(look.texts.help_link)}</a></p>\n`
    : '';
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n${help}` : '';
  const logo = look.logoUrl ? `<img class="logo" src="${escapeHtml(look.logoUrl)}" alt="">\n` : '';
  return hostedPage(
    look.title,
    `${logo}<h1>${escapeHtml(look.title)}</h1>
${error}<form id="${LOGIN_FORM_ID}" class="login" method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<label for="handle">${escapeHtml(look.texts.handle_label)}</label>
<input id="handle" name="handle" type="text" autocomplete="${input.passkey ? 'username webauthn' : 'username'}" autocapitalize="none" spellcheck="false" required maxlength="320" value="${escapeHtml(input.handle ?? '')}"${input.handle ? '' : ' autofocus'}>
<label for="password">${escapeHtml(look.texts.password_label)}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${input.handle ? ' autofocus' : ''}>
<button type="submit">${escapeHtml(look.texts.submit)}</button>
</form>${passkeyPart(input)}${emailCodeButton(input.emailCodeAction)}${emailLinkButton(input.emailLinkAction)}${ssoForms(input, look)}`,
    head,
  );
}

/** A page for a problem the service cannot send back to the application. */
export function errorPage(message: string): string {
  return hostedPage(
    'Sign-in problem',
    `<h1>This sign-in cannot continue</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Go back to the application and start the sign-in again.</p>`,
  );
}
