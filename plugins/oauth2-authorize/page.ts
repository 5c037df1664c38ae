// The hosted login page and the error page, in the service's page shell (core/http/hosted-page.ts):
// server-rendered, no script, no external asset, the one stylesheet allowed by its hash.
import { hostedPage } from '../../core/http/hosted-page.ts';
import { escapeHtml } from '../../core/http/html.ts';

export interface LoginPageInput {
  clientName: string;
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
}

/** One form per SSO credential: each posts the login's CSRF token and the credential it names. */
function ssoForms(input: LoginPageInput): string {
  const choices = input.choices ?? [];
  if (!choices.length || !input.ssoAction) return '';
  const forms = choices.map(
    (c) => `<form method="post" action="${escapeHtml(input.ssoAction ?? '')}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="credential" value="${escapeHtml(c.clientId)}">
<button type="submit">Sign in with ${escapeHtml(c.name)}</button>
</form>`,
  );
  return `\n<section class="sso" aria-label="Single sign-on">\n${forms.join('\n')}\n</section>`;
}

/**
 * The sign-in form: a handle (email address, phone number or username) and a password, then one button
 * per SSO credential offered.
 */
export function loginPage(input: LoginPageInput): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  return hostedPage(
    `Sign in to ${input.clientName}`,
    `<h1>Sign in to ${escapeHtml(input.clientName)}</h1>
${error}<form class="login" method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<label for="handle">Email address, phone number or username</label>
<input id="handle" name="handle" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="320" value="${escapeHtml(input.handle ?? '')}"${input.handle ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${input.handle ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>${ssoForms(input)}`,
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
