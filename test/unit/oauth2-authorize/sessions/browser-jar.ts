import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, authorizationUrl, discover, REDIRECT } from '../fixture.ts';

/** The cookies one browser holds for the service: what Set-Cookie gave it, sent back as a browser would. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  /** Takes every Set-Cookie of a response (Max-Age=0 removes). */
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (attributes.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
  }
  /** The session cookie's name and value (the one whose name starts with `sid_`). */
  session(): [string, string] | undefined {
    return [...this.cookies].find(([n]) => n.startsWith('sid_'));
  }
  async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', this.header());
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.take(res);
    return res;
  }
}

/** Posts a hosted page's form (the login or the consent page) as the browser. */
export async function postPage(
  jar: CookieJar,
  s: AuthorizeService,
  path: string,
  form: Record<string, string>,
) {
  return jar.fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.url },
    body: new URLSearchParams(form).toString(),
  });
}

/** The csrf_token of a page's form. */
export async function csrfOf(res: Response): Promise<string> {
  const html = await res.text();
  const token = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
  if (!token) throw new Error(`no csrf_token in the page (status ${res.status}): ${html.slice(0, 400)}`);
  return token;
}

/** An authorization request of the client as its browser sends it; answers the response and what it sent. */
export async function authorize(
  jar: CookieJar,
  s: AuthorizeService,
  clientId: string,
  extra: Record<string, string> = {},
) {
  const as = await discover(s);
  const request = await authorizationUrl(as, clientId, extra);
  const res = await jar.fetch(request.url);
  return { res, ...request };
}

/** The client's callback of a redirect answer: its query parameters, after checking it goes to REDIRECT. */
export async function callbackOf(res: Response): Promise<URLSearchParams> {
  if (res.status !== 302 && res.status !== 303) await expectStatus(res, 302);
  const location = new URL(res.headers.get('location')!);
  if (`${location.origin}${location.pathname}` !== REDIRECT)
    throw new Error(`redirected to ${location.href}`);
  return location.searchParams;
}

/** Signs in through the hosted login in the jar's browser: the page, then the password form. */
export async function signIn(
  jar: CookieJar,
  s: AuthorizeService,
  clientId: string,
  who: { handle: { value: string }; password: string },
  extra: Record<string, string> = {},
) {
  const opened = await authorize(jar, s, clientId, extra);
  await expectStatus(opened.res.clone(), 200);
  const csrf = await csrfOf(opened.res);
  const res = await postPage(jar, s, '/oauth2/authorize/login', {
    csrf_token: csrf,
    handle: who.handle.value,
    password: who.password,
  });
  return { ...opened, res };
}
