import { cookieOf } from '../../../core/http/hosted-page.ts';

/** A session cookie's value as this service makes it: 256 random bits, base64url. */
const SESSION_VALUE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The sign-in session cookie of each organization: one browser may be signed in to several organizations
 * of one deployment (they share its origin), so each has its own cookie, named after it. HttpOnly,
 * SameSite=Lax (a client's top-level GET to the authorization endpoint carries it; another site's
 * subrequest or POST does not), Secure and `__Host-` outside plain-http loopback development. The value
 * is random; the session row holds its digest, and names the organization the cookie must be sent for.
 */
export function sessionCookies(o: { baseUrl: string; maxAgeSeconds: number }) {
  const secure = new URL(o.baseUrl).protocol === 'https:';
  const prefix = secure ? '__Host-sid_' : 'sid_';
  const nameOf = (orgId: string) => `${prefix}${orgId.replaceAll('-', '')}`;
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  return {
    nameOf,
    /** The session cookie's value the request carries for the organization, when well formed. */
    sent(request: Request, orgId: string): string | undefined {
      const value = cookieOf(request, nameOf(orgId));
      return value && SESSION_VALUE.test(value) ? value : undefined;
    },
    /** Every organization's session cookie the request carries: `[orgId without dashes, value]`. */
    all(request: Request): { orgKey: string; value: string }[] {
      const header = request.headers.get('cookie') ?? '';
      const found: { orgKey: string; value: string }[] = [];
      for (const part of header.split(';')) {
        const [name, value] = part.trim().split('=', 2);
        if (name?.startsWith(prefix) && value && SESSION_VALUE.test(value))
          found.push({ orgKey: name.slice(prefix.length), value });
      }
      return found;
    },
    /** The Set-Cookie that gives the browser the organization's session. */
    set: (orgId: string, value: string) =>
      `${nameOf(orgId)}=${value}; ${attributes}; Max-Age=${o.maxAgeSeconds}`,
    /** The Set-Cookie that removes it. */
    clear: (orgId: string) => `${nameOf(orgId)}=; ${attributes}; Max-Age=0`,
  };
}

export type SessionCookies = ReturnType<typeof sessionCookies>;
