// Pages the service serves to people (the hosted login, a password reset, an email verification): server-rendered, no
// script, no external asset. The one stylesheet is inline and allowed by its hash, so the
// Content-Security-Policy forbids everything else. Forms are protected by a double-submit token.
import { constantTimeEqual, randomSecret, sha256 } from '../ids.ts';
import { escapeHtml } from './html.ts';

const CSS = `*{box-sizing:border-box}body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f3f4f6;color:#111827}main{width:100%;max-width:26rem;margin:1rem;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}h1{font-size:1.25rem;margin:0 0 1rem}label{display:block;font-size:.875rem;font-weight:600;margin:1rem 0 .25rem}input{width:100%;padding:.6rem .75rem;font:inherit;border:1px solid #6b7280;border-radius:.5rem}input:focus{outline:2px solid #2563eb;outline-offset:1px}.logo{display:block;max-width:100%;max-height:4rem;margin:0 auto 1rem}.help{font-size:.875rem}button{width:100%;margin-top:1.5rem;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#1d4ed8;border:0;border-radius:.5rem;cursor:pointer}button:hover{background:#1e40af}.error{margin:0 0 1rem;padding:.75rem;border-radius:.5rem;background:#fef2f2;color:#991b1b}.done{margin:0 0 1rem;padding:.75rem;border-radius:.5rem;background:#f0fdf4;color:#166534}p.note{color:#374151;font-size:.875rem}.sso{margin-top:1.5rem;padding-top:.5rem;border-top:1px solid #e5e7eb}.sso button{margin-top:.75rem;color:#111827;background:#fff;border:1px solid #d1d5db}.sso button:hover,.sso button:focus{background:#f3f4f6}button:focus{outline:2px solid #2563eb;outline-offset:2px}.login button{background:#2563eb}.login button:hover{background:#1d4ed8}`;

let styleHash: Promise<string> | undefined;

/** The CSP source that allows one inline stylesheet: `'sha256-...'` of its text. */
export async function styleSourceOf(css: string): Promise<string> {
  return `'sha256-${btoa(String.fromCharCode(...(await sha256(css))))}'`;
}

/** The CSP source of the inline stylesheet: `'sha256-...'`. */
export function pageStyleSource(): Promise<string> {
  styleHash ??= styleSourceOf(CSS);
  return styleHash;
}

/** What a page adds to the policy: the hashes of its own stylesheets, the origins of its images. */
export interface PageSources {
  styles?: readonly string[];
  images?: readonly string[];
  /** Hashes of inline scripts (the form_post answer's one line that submits its form). */
  scripts?: readonly string[];
}

/**
 * The headers of every page: no caching, no framing, no script, the stylesheet by hash (`style`, from
 * `pageStyleSource()`), forms posting to this origin only, or also to `formTargets` (browsers apply
 * form-action to the redirect after a submission, such as the hosted login's to an SSO provider). A
 * page's URL may hold a one-time token, so the Referer goes to this origin only: the page's own form
 * (whose Origin header the browser then sends, where `no-referrer` would make it `null`), and nowhere else.
 * A page with a stylesheet of its own or images (a client's hosted-UI configuration) names them in
 * `more`: no image is allowed unless its origin is listed.
 */
export function pageHeaders(
  style: string,
  formTargets: readonly string[] = [],
  more: PageSources = {},
): Record<string, string> {
  const images = [...new Set(more.images ?? [])];
  const csp = [
    "default-src 'none'",
    ['style-src', style, ...(more.styles ?? [])].join(' '),
    ...(more.scripts?.length ? [['script-src', ...more.scripts].join(' ')] : []),
    images.length ? `img-src ${images.join(' ')}` : "img-src 'none'",
    `form-action 'self' ${formTargets.join(' ')}`.trim(),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'cache-control': 'no-store',
    pragma: 'no-cache',
  };
}

/**
 * A whole page: `body` is HTML the caller has escaped (use `escapeHtml` for every value), as is `head`
 * (elements after the stylesheet: a favicon link, a stylesheet of the page's own).
 */
export const hostedPage = (title: string, body: string, head = '') => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${CSS}</style>${head}
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

/** An answer with a page, its status and the page headers (plus `extra`, such as a cookie). */
export async function pageResponse(status: number, html: string, extra: Record<string, string> = {}) {
  return new Response(html, { status, headers: { ...pageHeaders(await pageStyleSource()), ...extra } });
}

/** The value of one cookie of a request, or undefined. */
export function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The fields of a form post (`application/x-www-form-urlencoded`), each given exactly once; a problem
 * is a message naming the field, to show on a page.
 */
export async function readForm<const F extends string>(
  request: Request,
  fields: readonly F[],
): Promise<{ ok: true; form: Record<F, string> } | { ok: false; problem: string }> {
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return { ok: false, problem: 'the form must be sent as application/x-www-form-urlencoded' };
  const body = new URLSearchParams(await request.text());
  const form = {} as Record<F, string>;
  for (const name of fields) {
    const all = body.getAll(name);
    if (all.length !== 1) return { ok: false, problem: `the form field ${name} must be given once` };
    form[name] = all[0]!;
  }
  return { ok: true, form };
}

/**
 * Double-submit protection of a form: the page sets a random value in an httpOnly, SameSite=Strict
 * cookie and in a hidden field; a post is accepted only when both came back equal and, when the browser
 * says where the post came from, from this origin. Another site can make a browser post, but can
 * neither read nor set the cookie.
 */
export function formGuard(o: { baseUrl: string; name: string; path: string; maxAgeSeconds: number }) {
  const secure = new URL(o.baseUrl).protocol === 'https:';
  // __Host- needs Secure and Path=/; over plain http (loopback development) a plain name.
  const cookieName = secure ? `__Host-${o.name}` : o.name;
  const path = secure ? '/' : o.path;
  const origin = new URL(o.baseUrl).origin;
  const bytes = (s: string) => new TextEncoder().encode(s);
  return {
    /** A fresh token and the Set-Cookie header that pairs it with this browser. */
    issue() {
      const token = randomSecret('');
      const cookie = `${cookieName}=${token}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${o.maxAgeSeconds}${secure ? '; Secure' : ''}`;
      return { token, cookie };
    },
    /** Why a post fails the check, or undefined when it passes. */
    refusal(request: Request, token: string): string | undefined {
      const from = request.headers.get('origin');
      if (from !== null && from !== origin) return `the form was posted from another origin (${from})`;
      const sent = cookieOf(request, cookieName);
      if (!sent || !token || !constantTimeEqual(bytes(sent), bytes(token)))
        return 'the form did not come from the page this browser opened (its cookie is missing or another); open the link again';
      return undefined;
    },
  };
}

export { escapeHtml };
