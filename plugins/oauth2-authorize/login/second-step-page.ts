import type { PasskeyCeremony } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { OAuthClientUiConfiguration } from '../../../core/capabilities/oauth2-server.ts';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import { hostedPage } from '../../../core/http/hosted-page.ts';
import { escapeHtml } from '../../../core/http/html.ts';
import { emailSecondStepForm } from './email-code-page.ts';
import type { PageLook } from './page-look.ts';
import { passkeyForm } from './passkey-page.ts';

export interface SecondStepPageInput {
  clientName: string;
  ui?: OAuthClientUiConfiguration | undefined;
  /** Where the form posts: PUBLIC_BASE_URL + /oauth2/authorize/second-factor. */
  action: string;
  /** The second step's login: the form's CSRF token, bound to the browser's cookie. */
  csrfToken: string;
  /** The second factors offered, those the hosted login runs. */
  methods: readonly SecondFactor[];
  error?: string | undefined;
  /** otp_via_email's forms: where its button sends the code, and the code's challenge once sent. */
  emailCode?: { sendAction: string; challengeId?: string | undefined } | undefined;
  /** With `webauthn` offered: the options for the person's passkeys, and where the answer posts. */
  passkey?: { ceremony: PasskeyCeremony; action: string } | undefined;
}

/** What each second factor's form asks for. */
const FORMS: Partial<Record<SecondFactor, { label: string; hint: string }>> = {
  totp: {
    label: 'Code from your authenticator app',
    hint: 'Or one of your recovery codes.',
  },
};

/**
 * The hosted login's second step: the first factor succeeded and the organization asks for another.
 * One form per second factor the page can run (a one-time code from an authenticator app).
 */
export function secondStepPage(input: SecondStepPageInput, look: PageLook, head = ''): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  const forms = input.methods.flatMap((method) => {
    if (method === 'otp_via_email')
      return input.emailCode
        ? [emailSecondStepForm({ action: input.action, csrfToken: input.csrfToken, ...input.emailCode })]
        : [];
    const form = FORMS[method];
    if (!form) return [];
    return [
      `<form class="login" method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="method" value="${escapeHtml(method)}">
<label for="code-${method}">${escapeHtml(form.label)}</label>
<input id="code-${method}" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required maxlength="64" autofocus>
<p class="note">${escapeHtml(form.hint)}</p>
<button type="submit">Continue</button>
</form>`,
    ];
  });
  return hostedPage(
    look.title,
    `<h1>Confirm it is you</h1>
<p class="note">${escapeHtml(input.clientName)} asks for a second step.</p>
${error}${forms.join('\n')}${
  input.passkey && input.methods.includes('webauthn')
    ? `\n${passkeyForm({
        action: input.passkey.action,
        csrfToken: input.csrfToken,
        ceremony: input.passkey.ceremony,
        kind: 'get',
        label: 'Use a passkey',
      })}`
    : ''
}`,
    head,
  );
}

/** The second factors this page can run. */
export const PAGE_SECOND_FACTORS: readonly SecondFactor[] = [
  ...(Object.keys(FORMS) as SecondFactor[]).filter((m) => FORMS[m] !== undefined),
  'otp_via_email',
  'webauthn',
];
