import { base64url, randomSecret, sha256 } from '../ids.ts';
import { cookieOf } from './hosted-page.ts';

/** A browser cookie's value as this service makes it: 256 random bits, base64url. */
const BROWSER_VALUE = /^[A-Za-z0-9_-]{43}$/;

/** How a browser's cookie value is stored with what it started: its SHA-256, base64url. */
export const browserDigest = async (value: string): Promise<string> => base64url(await sha256(value));

/**
 * The cookie that binds a sign-in under way to the browser that started it (the hosted login, SSO
 * sign-in): a random value, HttpOnly, SameSite=Lax (a provider's redirect back, a top-level GET,
 * carries it; another site's subrequest does not), Secure and `__Host-` outside plain-http loopback
 * development. What the sign-in stores is the value's digest; the answer that finishes it must come
 * with the value.
 *
 * @example
 * const binding = browserBinding({ baseUrl, name: 'sso_browser', maxAgeSeconds: 600 });
 * const { value, setCookie } = binding.take(request); // at the start: store browserDigest(value)
 * binding.refusal(request, storedDigest); // at the callback: undefined when it is the same browser
 */
export function browserBinding(o: { baseUrl: string; name: string; maxAgeSeconds: number }) {
  const secure = new URL(o.baseUrl).protocol === 'https:';
  // __Host-: only this origin may set or read it (Secure, Path=/, no Domain). Plain http is loopback only.
  const name = secure ? `__Host-${o.name}` : o.name;
  const sent = (request: Request): string | undefined => cookieOf(request, name);
  return {
    name,
    /** The cookie's value the request carries, if any. */
    sent,
    /** The Set-Cookie header that gives the browser this value. */
    cookie: (value: string) =>
      `${name}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${o.maxAgeSeconds}${secure ? '; Secure' : ''}`,
    /** The browser's value (the one it sent when well formed, else a fresh one) and its Set-Cookie. */
    take(request: Request): { value: string; setCookie: string } {
      const had = sent(request);
      const value = had && BROWSER_VALUE.test(had) ? had : randomSecret('');
      return { value, setCookie: this.cookie(value) };
    },
    /** Why the request is not from the browser whose value has this digest; undefined when it is. */
    async refusal(request: Request, storedDigest: string | undefined): Promise<string | undefined> {
      const value = sent(request);
      if (storedDigest && value && (await browserDigest(value)) === storedDigest) return undefined;
      return 'the sign-in was not continued by the browser that started it (its cookie is missing or another)';
    },
  };
}

export type BrowserBinding = ReturnType<typeof browserBinding>;
