// The hosted login page and the error page: server-rendered, no script, no external asset. The one
// stylesheet is inline and allowed by its hash, so the Content-Security-Policy can forbid everything else.

const CSS = `*{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}main{width:100%;max-width:24rem;margin:1rem;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}h1{font-size:1.25rem;margin:0 0 1.5rem}label{display:block;font-size:.875rem;font-weight:600;margin:1rem 0 .25rem}input{width:100%;padding:.6rem .75rem;font:inherit;border:1px solid #d1d5db;border-radius:.5rem}input:focus{outline:2px solid #2563eb;outline-offset:1px}button{width:100%;margin-top:1.5rem;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#2563eb;border:0;border-radius:.5rem;cursor:pointer}button:hover{background:#1d4ed8}.error{margin:0 0 1rem;padding:.75rem;border-radius:.5rem;background:#fef2f2;color:#991b1b}p.note{color:#4b5563;font-size:.875rem}.sso{margin-top:1.5rem;padding-top:.5rem;border-top:1px solid #e5e7eb}.sso button{margin-top:.75rem;color:#111827;background:#fff;border:1px solid #d1d5db}.sso button:hover,.sso button:focus{background:#f3f4f6}button:focus{outline:2px solid #2563eb;outline-offset:2px}`;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text or an attribute value made safe for HTML. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** The CSP source of the inline stylesheet: `'sha256-...'` (standard base64 of its SHA-256). */
export async function styleSource(): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(CSS)));
  return `'sha256-${btoa(String.fromCharCode(...bytes))}'`;
}

/**
 * The headers of every page: no caching, no framing (X-Frame-Options and frame-ancestors), no script,
 * the stylesheet by hash, and forms that post here only. `formTargets` lists the origins a form's
 * answer may redirect to (browsers apply form-action to the redirect after a submission).
 */
export function pageHeaders(style: string, formTargets: readonly string[] = []): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src ${style}`,
    "img-src 'none'",
    `form-action 'self' ${formTargets.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    // The form posts to the same origin with its Origin header; nothing leaks to another site.
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
    pragma: 'no-cache',
  };
}

const layout = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

export interface LoginPageInput {
  clientName: string;
  /** Where the form posts: PUBLIC_BASE_URL + /oauth2/authorize/login. */
  action: string;
  /** The login's ID: the form's CSRF token, bound to the browser's cookie. */
  csrfToken: string;
  handle?: string | undefined;
  error?: string | undefined;
  /** Where an SSO button posts: PUBLIC_BASE_URL + /oauth2/authorize/sso. */
  ssoAction?: string;
  /** One button per SSO credential offered: the credential's client ID and its name. */
  choices?: readonly { clientId: string; name: string }[];
}

/** One form per SSO credential: each posts the login's CSRF token and the credential it names. */
function ssoForms(input: LoginPageInput): string {
  const choices = input.choices ?? [];
  if (!choices.length || !input.ssoAction) return '';
  const forms = choices.map(
    (c) => `<form method="post" action="${escapeHtml(input.ssoAction ?? '')}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<input type="hidden" name="credential" value="${escapeHtml(c.clientId)}">
<button type="submit">Sign in with ${escapeHtml(c.name)}</button>
</form>`,
  );
  return `\n<section class="sso" aria-label="Single sign-on">\n${forms.join('\n')}\n</section>`;
}

/**
 * The sign-in form: a handle (email address, phone number or username) and a password, then one button
 * per SSO credential offered.
 */
export function loginPage(input: LoginPageInput): string {
  const error = input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>\n` : '';
  return layout(
    `Sign in to ${input.clientName}`,
    `<h1>Sign in to ${escapeHtml(input.clientName)}</h1>
${error}<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(input.csrfToken)}">
<label for="handle">Email address, phone number or username</label>
<input id="handle" name="handle" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="320" value="${escapeHtml(input.handle ?? '')}"${input.handle ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"${input.handle ? ' autofocus' : ''}>
<button type="submit">Sign in</button>
</form>${ssoForms(input)}`,
  );
}

/** A page for a problem the service cannot send back to the application. */
export function errorPage(message: string): string {
  return layout(
    'Sign-in problem',
    `<h1>This sign-in cannot continue</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
<p class="note">Go back to the application and start the sign-in again.</p>`,
  );
}
