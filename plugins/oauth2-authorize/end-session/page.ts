// The logout pages, in the service's page shell (core/http/hosted-page.ts): server-rendered, no script,
// no external asset, the one stylesheet allowed by its hash.
import { escapeHtml, hostedPage } from '../../../core/http/hosted-page.ts';

export interface ConfirmPageInput {
  /** Where the form posts: PUBLIC_BASE_URL + /oauth2/logout. */
  action: string;
  /** The confirmation's CSRF token, paired with the browser's cookie. */
  csrfToken: string;
  /** The application asking, when known. */
  clientName?: string | undefined;
  /** The parameters carried to the confirmation: client_id, post_logout_redirect_uri, state. */
  carried: Record<string, string>;
}

/** Asks the person whether to sign out: a form posting back, with its CSRF token. */
export function confirmPage(input: ConfirmPageInput): string {
  const hidden = Object.entries({ csrf_token: input.csrfToken, ...input.carried })
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  const scope = input.clientName
    ? `You will be signed out of ${escapeHtml(input.clientName)} and of every other application of its organization you signed in to from this browser.`
    : 'You will be signed out of every application you signed in to from this browser.';
  return hostedPage(
    'Sign out',
    `<h1>Sign out?</h1>
<p class="note">${scope}</p>
<form class="login" method="post" action="${escapeHtml(input.action)}">
${hidden}
<button type="submit">Sign out</button>
</form>`,
  );
}

/** Said once the browser's sessions ended, when no client asked to have it back. */
export function signedOutPage(): string {
  return hostedPage(
    'Signed out',
    `<h1>Signed out</h1>
<p class="done" role="status">You are signed out. You can close this window.</p>`,
  );
}

/** A logout request the service cannot act on, or a confirmation it cannot accept. */
export function logoutErrorPage(message: string): string {
  return hostedPage(
    'Sign-out problem',
    `<h1>This sign-out cannot continue</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Nothing was changed. Go back to the application and sign out again.</p>`,
  );
}
