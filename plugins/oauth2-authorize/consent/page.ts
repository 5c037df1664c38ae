// The hosted consent page: a third-party client (first_party false) asks the person to allow it the
// scopes of the authorization request. In the page shell of the login (core/http/hosted-page.ts):
// server-rendered, no script, every value escaped, stylesheets allowed by their hashes only.

import type { OAuthClientUiConfiguration } from '../../../core/capabilities/oauth2-server.ts';
import { hostedPage, type PageSources, styleSourceOf } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import { headOf, lookOf } from '../login/page-look.ts';

/** What the consent page shows and where it posts. */
export interface ConsentPageInput {
  /** The client's name, as registered. */
  clientName: string;
  /** The client's hosted-UI configuration (its logo, favicon, background); absent: the defaults. */
  ui?: OAuthClientUiConfiguration | undefined;
  /** The scopes asked, in the request's order. */
  scopes: readonly string[];
  /** PUBLIC_BASE_URL: the form posts to `${baseUrl}/oauth2/authorize/consent`. */
  baseUrl: string;
  /** The form's CSRF token (the hidden `csrf_token` field), bound to the browser by the caller. */
  csrfToken: string;
  /** Who is signed in (a handle), shown under the title; absent: not shown. */
  signedInAs?: string | undefined;
}

/** What the standard scopes let a client do, as the page says it; any other scope is shown by name. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  openid: 'Know who you are (your account identifier)',
  email: 'See your email address',
  phone: 'See your phone number',
  username: 'See your username',
  offline_access: 'Keep access when you are not using it',
};

// The page's own rules beside the shell's: the scope list, and Deny as the secondary button.
const CONSENT_CSS =
  '.scopes{margin:0 0 1rem;padding-left:1.25rem}.scopes li{margin:.25rem 0}.scopes code{font-size:.875rem}.decision button.deny{color:#111827;background:#fff;border:1px solid #d1d5db;margin-top:.75rem}.decision button.deny:hover,.decision button.deny:focus{background:#f3f4f6}';

/** One item of the scope list: the description of a standard scope, else the scope's name. */
function scopeItem(scope: string): string {
  const description = Object.hasOwn(SCOPE_DESCRIPTIONS, scope) ? SCOPE_DESCRIPTIONS[scope] : undefined;
  return description
    ? `<li data-scope="${escapeHtml(scope)}">${escapeHtml(description)}</li>`
    : `<li data-scope="${escapeHtml(scope)}"><code>${escapeHtml(scope)}</code></li>`;
}

/** The consent page's title: what the person is asked. */
export const consentTitle = (clientName: string) => `Allow ${clientName} access to your account?`;

/**
 * The consent page: the client's name and logo, the scopes asked (the standard ones described, others
 * by name), and one form with Allow and Deny, posting `csrf_token` and `decision` (`allow` or `deny`)
 * to `${baseUrl}/oauth2/authorize/consent`. Pure: `head` is consentPageHead's (the favicon and the
 * stylesheets the CSP must allow), without which the page still works, unstyled beyond the shell.
 *
 * @example
 * const { head, sources } = await consentPageHead(input);
 * new Response(consentPage(input, head), { headers: pageHeaders(style, [redirectOrigin], sources) });
 */
export function consentPage(input: ConsentPageInput, head = ''): string {
  const look = lookOf(input.ui, input.clientName);
  const title = consentTitle(input.clientName);
  const logo = look.logoUrl ? `<img class="logo" src="${escapeHtml(look.logoUrl)}" alt="">\n` : '';
  const who = input.signedInAs ? `<p class="note">Signed in as ${escapeHtml(input.signedInAs)}</p>\n` : '';
  const asked = input.scopes.length
    ? `<p>${escapeHtml(input.clientName)} asks to:</p>\n<ul class="scopes">\n${input.scopes.map(scopeItem).join('\n')}\n</ul>\n`
    : `<p>${escapeHtml(input.clientName)} asks to sign you in.</p>\n`;
  return hostedPage(
    title,
    `${logo}<h1>${escapeHtml(title)}</h1>
${who}${asked}<form class="decision" method="post" action="${escapeHtml(`${input.baseUrl}/oauth2/authorize/consent`)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<button type="submit" name="decision" value="allow" autofocus>Allow</button>
<button type="submit" name="decision" value="deny" class="deny">Deny</button>
</form>
<p class="note">Your answer is remembered for this application until it is withdrawn.</p>`,
    head,
  );
}

/**
 * The consent page's head (the client's favicon and background, the page's own stylesheet) and what the
 * CSP must allow for it (pageHeaders' `more`): the stylesheets by hash, the logo's and favicon's origins.
 */
export async function consentPageHead(
  input: Pick<ConsentPageInput, 'clientName' | 'ui'>,
): Promise<{ head: string; sources: PageSources }> {
  const { head, sources } = await headOf(lookOf(input.ui, input.clientName));
  return {
    head: `\n<style>${CONSENT_CSS}</style>${head}`,
    sources: { ...sources, styles: [await styleSourceOf(CONSENT_CSS), ...(sources.styles ?? [])] },
  };
}
