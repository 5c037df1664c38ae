import { escapeHtml, hostedPage } from '../../../core/http/hosted-page.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../policy/policy.ts';

export interface ResetFormInput {
  organization: string;
  /** The address the link went to: shown, and given to password managers as the username. */
  handle: string;
  token: string;
  csrfToken: string;
  error?: string | undefined;
}

/** The form: a new password twice. No script; the browser checks the length, the service the rest. */
export function resetFormPage(input: ResetFormInput): string {
  const org = escapeHtml(input.organization);
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  return hostedPage(
    `Choose a new password for ${input.organization}`,
    `<h1>Choose a new password</h1>
<p class="note">For the ${org} account of <strong>${escapeHtml(input.handle)}</strong>.</p>
${error}<form method="post" action="/password/reset">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="token" value="${escapeHtml(input.token)}">
<input type="text" name="username" autocomplete="username" value="${escapeHtml(input.handle)}" hidden>
<label for="password">New password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH * 4}" aria-describedby="rule" autofocus>
<p id="rule" class="note">At least ${MIN_PASSWORD_LENGTH} characters, and not a common password.</p>
<label for="password_confirm">The new password again</label>
<input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="${MAX_PASSWORD_LENGTH * 4}">
<button type="submit">Set the new password</button>
</form>`,
  );
}

/** The password is changed. */
export function resetDonePage(organization: string): string {
  return hostedPage(
    'Your password has been changed',
    `<h1>Your password has been changed</h1>
<p class="done" role="status">You can now sign in to ${escapeHtml(organization)} with your new password.</p>
<p class="note">You can close this page.</p>`,
  );
}

/** The link resets nothing (expired, used, superseded, unknown) or the form was refused. */
export function resetRefusedPage(message: string): string {
  return hostedPage(
    'This reset link cannot be used',
    `<h1>This reset link cannot be used</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Ask for a new password reset where you sign in.</p>`,
  );
}
