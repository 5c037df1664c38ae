import { hostedPage, styleSourceOf } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';

/** The one script of the page: it submits the form as soon as the page is read. */
const SUBMIT = 'document.forms[0].submit()';

let scriptHash: Promise<string> | undefined;

/** The CSP source that allows the submitting script, and nothing else: its SHA-256. */
export const formPostScriptSource = (): Promise<string> => {
  // The same `'sha256-…'` form as the stylesheet's.
  scriptHash ??= styleSourceOf(SUBMIT);
  return scriptHash;
};

/**
 * The OAuth 2.0 Form Post Response Mode's answer: a page whose form posts the response parameters to
 * the client's redirect URI, submitted by a script the CSP allows by its hash; without script, a button.
 */
export function formPostPage(redirectUri: string, params: Record<string, string | undefined>): string {
  const fields = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return hostedPage(
    'Signing in',
    `<form method="post" action="${escapeHtml(redirectUri)}">
${fields}
<noscript><p class="note">Your browser does not run scripts: continue to the application.</p><button type="submit">Continue</button></noscript>
</form>
<script>${SUBMIT}</script>`,
  );
}
