import { CoreErrors } from '../errors.ts';

/** The origin given to requests whose Host cannot make a URL: routing only needs the path. */
const FALLBACK_ORIGIN = 'http://localhost';

/** Where the path starts in `url`: after `scheme://authority`, or 0 for an origin-less target. */
function pathStart(url: string): number {
  const scheme = url.indexOf('://');
  if (scheme < 0) return url.startsWith('/') ? 0 : -1;
  return url.indexOf('/', scheme + 3);
}

/** The path of a request URL without its query, for logs and messages; never throws. */
export function urlPathOf(url: string): string {
  const start = pathStart(url);
  if (start < 0) return '/';
  const query = url.indexOf('?', start);
  return url.slice(start, query < 0 ? undefined : query);
}

/**
 * The request with a URL the router can use. A client decides the Host header: empty, `a/b` or `x@y`
 * leave servers with a URL that does not parse, and an authority shorter than four characters defeats
 * the router's fast path lookup (it searches for the path from a fixed offset). Such requests are
 * rebuilt on a fixed origin with the same path, query, method, headers and body; others pass as they are.
 */
export function routableRequest(request: Request): Request {
  const url = request.url;
  const start = pathStart(url);
  if (start >= 11 && URL.canParse(url)) return request;
  const target = FALLBACK_ORIGIN + (start < 0 ? '/' : url.slice(start));
  if (!URL.canParse(target)) throw CoreErrors.INVALID_REQUEST_TARGET();
  return new Request(target, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    duplex: 'half',
  } as RequestInit);
}
