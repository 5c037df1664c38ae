import { escapeHtml, hostedPage } from '../../../core/http/hosted-page.ts';

/** One button: following a link only shows it, so a mail scanner that opens links verifies nothing. */
export function confirmPage(input: {
  organization: string;
  handle: string;
  token: string;
  csrfToken: string;
}): string {
  return hostedPage(
    `Confirm your email address for ${input.organization}`,
    `<h1>Confirm your email address</h1>
<p>Confirm that <strong>${escapeHtml(input.handle)}</strong> is your email address for ${escapeHtml(input.organization)}.</p>
<form method="post" action="/email/verify">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<button type="submit">Confirm my email address</button>
</form>`,
  );
}

export function verifiedPage(handle: string): string {
  return hostedPage(
    'Your email address is confirmed',
    `<h1>Your email address is confirmed</h1>
<p class="done" role="status">${escapeHtml(handle)} is confirmed. You can close this page.</p>`,
  );
}

export function verificationRefusedPage(message: string): string {
  return hostedPage(
    'This confirmation link cannot be used',
    `<h1>This confirmation link cannot be used</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Ask for a new confirmation message where you manage your account.</p>`,
  );
}
