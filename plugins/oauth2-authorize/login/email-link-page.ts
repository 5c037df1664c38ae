// The hosted login's sign-in link by email: the button of the login page, the "check your email" page
// of the login's window (with its "Continue"), and the pages of the link itself. Server-rendered, no
// script (the pages' CSP allows none): every step is a plain form POST.

import type { HostedLoginLink } from '../../../core/capabilities/hosted-login-email-codes.ts';
import { hostedPage } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import { LOGIN_FORM_ID } from './email-code-page.ts';
import type { PageLook } from './page-look.ts';

/** Under the password form: a button that sends its handle to the email-link route (no password). */
export function emailLinkButton(action: string | undefined): string {
  if (!action) return '';
  return `\n<section class="email-link" aria-label="Sign-in link by email">
<button type="submit" form="${LOGIN_FORM_ID}" formaction="${escapeHtml(action)}" formnovalidate>Email me a sign-in link</button>
</section>`;
}

export interface CheckMailInput {
  /** Where "Continue" posts: PUBLIC_BASE_URL + /oauth2/authorize/email-link/continue. */
  continueAction: string;
  /** Where a new link is asked for: PUBLIC_BASE_URL + /oauth2/authorize/email-link. */
  resendAction: string;
  csrfToken: string;
  challengeId: string;
  /** The address typed, shown and sent again with "Send a new link". */
  handle: string;
  error?: string | undefined;
  /** A note that is not an error (the link not pressed yet). */
  note?: string | undefined;
}

/** The login's window once the link is sent: the same for every address, whether it names a person or nobody. */
export function checkMailPage(input: CheckMailInput, look: PageLook, head = ''): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  const note = input.note ? `<p class="note" role="status">${escapeHtml(input.note)}</p>\n` : '';
  const csrf = `<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">`;
  const handle = `<input type="hidden" name="handle" value="${escapeHtml(input.handle)}">`;
  return hostedPage(
    look.title,
    `<h1>Check your email</h1>
<p class="note">If ${escapeHtml(input.handle)} belongs to an account here, a sign-in link is on its way to it. Open it and press its button.</p>
<p class="note">Opened on this device, the link signs you in where it opens. Opened on another device, come back here and press Continue.</p>
${error}${note}<form class="login" method="post" action="${escapeHtml(input.continueAction)}">
${csrf}
<input type="hidden" name="challenge_id" value="${escapeHtml(input.challengeId)}">
${handle}
<button type="submit">Continue</button>
</form>
<section class="sso" aria-label="Another link">
<form method="post" action="${escapeHtml(input.resendAction)}">
${csrf}
${handle}
<button type="submit">Send a new link</button>
</form>
</section>`,
    head,
  );
}

/**
 * The link's page: who asked, from where and when, and one button. Opening the link alone uses
 * nothing, so a mail scanner that follows links signs nobody in.
 */
export function linkConfirmPage(input: {
  organization: string;
  link: HostedLoginLink;
  token: string;
  formToken: string;
  action: string;
}): string {
  const org = escapeHtml(input.organization);
  const { link } = input;
  const where = [
    link.askedFrom ? `from the address ${escapeHtml(link.askedFrom)}` : '',
    link.askedWith ? `with <em>${escapeHtml(link.askedWith)}</em>` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return hostedPage(
    `Sign in to ${input.organization}`,
    `<h1>Sign in to ${org}</h1>
<p>Someone asked to sign in to ${org} as <strong>${escapeHtml(link.handle)}</strong> at ${escapeHtml(link.askedAt)}${where ? ` ${where}` : ''}.</p>
<p class="note">Press the button only if you asked for it just now.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="form_token" value="${escapeHtml(input.formToken)}">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<button type="submit">Sign me in</button>
</form>`,
  );
}

/** The link pressed in another browser than the login's: the login's window continues. */
export function linkConfirmedPage(organization: string): string {
  return hostedPage(
    'Sign-in confirmed',
    `<h1>Sign-in confirmed</h1>
<p class="done" role="status">Go back to the window where you asked to sign in to ${escapeHtml(organization)} and press Continue there.</p>
<p class="note">You can close this page.</p>`,
  );
}

/** A link that cannot be used, and why. */
export function linkRefusedPage(message: string): string {
  return hostedPage(
    'This sign-in link cannot be used',
    `<h1>This sign-in link cannot be used</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Ask for a new link where you sign in.</p>`,
  );
}
