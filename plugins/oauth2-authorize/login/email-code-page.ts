// The hosted login's sign-in code by email: the button of the login page, the code page, and the
// second step's forms. Server-rendered, no script, in the service's page shell.

import { hostedPage } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import type { PageLook } from './page-look.ts';

/** The login form's id: the email button below it sends the form's handle. */
export const LOGIN_FORM_ID = 'login-form';

/** Under the password form: a button that sends its handle to the email-code route instead (no password). */
export function emailCodeButton(action: string | undefined): string {
  if (!action) return '';
  return `\n<section class="email-code" aria-label="Sign-in code by email">
<button type="submit" form="${LOGIN_FORM_ID}" formaction="${escapeHtml(action)}" formnovalidate>Email me a sign-in code</button>
</section>`;
}

export interface EmailCodePageInput {
  /** Where the code posts: PUBLIC_BASE_URL + /oauth2/authorize/email-code/verify. */
  action: string;
  /** Where a new code is asked for: PUBLIC_BASE_URL + /oauth2/authorize/email-code. */
  resendAction: string;
  csrfToken: string;
  challengeId: string;
  /** The address typed, shown and sent again with "Send a new code". */
  handle: string;
  error?: string | undefined;
}

/** The code page: the same for every address typed, whether it names a person or nobody. */
export function emailCodePage(input: EmailCodePageInput, look: PageLook, head = ''): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">`;
  return hostedPage(
    look.title,
    `<h1>Check your email</h1>
<p class="note">If ${escapeHtml(input.handle)} belongs to an account here, a 6-digit sign-in code is on its way to it.</p>
${error}<form class="login" method="post" action="${escapeHtml(input.action)}">
${csrf}
<input type="hidden" name="challenge_id" value="${escapeHtml(input.challengeId)}">
<input type="hidden" name="handle" value="${escapeHtml(input.handle)}">
<label for="code">Sign-in code</label>
<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="64" autofocus>
<button type="submit">Continue</button>
</form>
<section class="sso" aria-label="Another code">
<form method="post" action="${escapeHtml(input.resendAction)}">
${csrf}
<input type="hidden" name="handle" value="${escapeHtml(input.handle)}">
<button type="submit">Send a new code</button>
</form>
</section>`,
    head,
  );
}

/**
 * The second step's otp_via_email: a button that sends the code (`sendAction`), then, once sent
 * (`challengeId`), the code field posting to the second step's action.
 */
export function emailSecondStepForm(input: {
  action: string;
  sendAction: string;
  csrfToken: string;
  challengeId?: string | undefined;
}): string {
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">`;
  const send = `<form method="post" action="${escapeHtml(input.sendAction)}">
${csrf}
<button type="submit">${input.challengeId ? 'Send a new code by email' : 'Email me a code'}</button>
</form>`;
  if (!input.challengeId) return `<section class="sso" aria-label="Code by email">\n${send}\n</section>`;
  return `<form class="login" method="post" action="${escapeHtml(input.action)}">
${csrf}
<input type="hidden" name="method" value="otp_via_email">
<input type="hidden" name="challenge_id" value="${escapeHtml(input.challengeId)}">
<label for="code-otp_via_email">Code from the email we sent you</label>
<input id="code-otp_via_email" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="64" autofocus>
<button type="submit">Continue</button>
</form>
<section class="sso" aria-label="Code by email">
${send}
</section>`;
}
