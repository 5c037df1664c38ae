import { escapeHtml, hostedPage } from '../../../core/http/hosted-page.ts';

/**
 * The page a sign-in link opens: who asked, from where and when, and one button. Opening the link
 * alone confirms nothing, so a mail scanner that follows links signs nobody in.
 */
export function confirmSignInPage(input: {
  organization: string;
  handle: string;
  token: string;
  csrfToken: string;
  /** When the sign-in was asked for (RFC 3339) and from where, as the service saw it. */
  askedAt: string;
  askedFrom: string | null;
  askedWith: string | null;
}): string {
  const org = escapeHtml(input.organization);
  const where = [
    input.askedFrom ? `from the address ${escapeHtml(input.askedFrom)}` : '',
    input.askedWith ? `with <em>${escapeHtml(input.askedWith)}</em>` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return hostedPage(
    `Sign in to ${input.organization}`,
    `<h1>Sign in to ${org}</h1>
<p>Someone asked to sign in to ${org} as <strong>${escapeHtml(input.handle)}</strong> at ${escapeHtml(input.askedAt)}${where ? ` ${where}` : ''}.</p>
<p class="note">Press the button only if you asked for it just now: the device that asked is then signed in.</p>
<form method="post" action="/email/sign-in">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<button type="submit">Sign me in</button>
</form>`,
  );
}

export function signInConfirmedPage(organization: string): string {
  return hostedPage(
    'Sign-in confirmed',
    `<h1>Sign-in confirmed</h1>
<p class="done" role="status">Go back to where you asked to sign in to ${escapeHtml(organization)}: it continues by itself.</p>
<p class="note">You can close this page.</p>`,
  );
}

export function signInLinkRefusedPage(message: string): string {
  return hostedPage(
    'This sign-in link cannot be used',
    `<h1>This sign-in link cannot be used</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Ask for a new link where you sign in.</p>`,
  );
}
