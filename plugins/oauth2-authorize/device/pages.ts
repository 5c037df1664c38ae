import { escapeHtml, hostedPage } from '../../../core/http/hosted-page.ts';
import { SCOPE_DESCRIPTIONS } from '../consent/page.ts';

/**
 * The page where the person enters the code their device shows (prefilled from
 * verification_uri_complete: the person still confirms, RFC 8628 §5.4), posting `user_code` to `action`.
 */
export function userCodePage(o: { action: string; userCode?: string; error?: string }): string {
  return hostedPage(
    'Connect a device',
    `<h1>Connect a device</h1>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<p>Enter the code your device shows.</p>
<form method="post" action="${escapeHtml(o.action)}">
<label for="user_code">Code</label>
<input id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" required value="${escapeHtml(o.userCode ?? '')}">
<button type="submit">Continue</button>
</form>`,
  );
}

const scopeItem = (scope: string) => {
  const description = Object.hasOwn(SCOPE_DESCRIPTIONS, scope) ? SCOPE_DESCRIPTIONS[scope] : undefined;
  return `<li data-scope="${escapeHtml(scope)}">${description ? escapeHtml(description) : `<code>${escapeHtml(scope)}</code>`}</li>`;
};

/** The approval page: the client's name and the scopes, and Allow or Deny posting `csrf_token` and `decision`. */
export function approvalPage(o: { action: string; clientName: string; scope: string[]; csrfToken: string }) {
  const title = `Allow ${o.clientName} on your device?`;
  return hostedPage(
    title,
    `<h1>${escapeHtml(title)}</h1>
<p>Only allow it if you started this on a device of yours and the device shows the code you entered.</p>
<p>${escapeHtml(o.clientName)} asks to:</p>
<ul class="scopes">${o.scope.map(scopeItem).join('')}</ul>
<form method="post" action="${escapeHtml(o.action)}" class="decision">
<input type="hidden" name="csrf_token" value="${escapeHtml(o.csrfToken)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="deny">Deny</button>
</form>`,
  );
}

/** The end: approved, or denied. */
export function decidedPage(approved: boolean): string {
  const title = approved ? 'Device connected' : 'Device not connected';
  return hostedPage(
    title,
    `<h1>${title}</h1>
<p>${approved ? 'You can return to your device: it is signed in.' : 'The device was refused. You can close this page.'}</p>`,
  );
}

/** A problem: why, and what to do. */
export function deviceErrorPage(message: string): string {
  return hostedPage(
    'Device sign-in problem',
    `<h1>This device sign-in cannot continue</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Enter the code your device shows again, or start again on the device.</p>`,
  );
}
