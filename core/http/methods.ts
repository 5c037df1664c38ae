/**
 * The HTTP method registry (IANA, "Hypertext Transfer Protocol (HTTP) Method Registry"): a method in it
 * that a path does not take is a 405; a method outside it is one nobody knows, a 501.
 */
const REGISTERED = new Set(
  (
    'ACL BASELINE-CONTROL BIND CHECKIN CHECKOUT CONNECT COPY DELETE GET HEAD LABEL LINK LOCK MERGE ' +
    'MKACTIVITY MKCALENDAR MKCOL MKREDIRECTREF MKWORKSPACE MOVE OPTIONS ORDERPATCH PATCH POST PRI ' +
    'PROPFIND PROPPATCH PUT QUERY REBIND REPORT SEARCH TRACE UNBIND UNCHECKOUT UNLINK UNLOCK UPDATE ' +
    'UPDATEREDIRECTREF VERSION-CONTROL'
  ).split(' '),
);

export const isRegisteredMethod = (method: string): boolean => REGISTERED.has(method);

/** A route as the router lists it. */
export interface RouteEntry {
  method: string;
  path: string;
}

const literal = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

/** `/a/:id/b`, `/a/:id?` and `/a/*` as a regular expression over a request path. */
function patternOf(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment, i) => {
      if (i === 0) return '';
      if (segment === '*') return '(?:/.*)?';
      if (segment.startsWith(':')) return segment.endsWith('?') ? '(?:/[^/]+)?' : '/[^/]+';
      return `/${literal(segment)}`;
    })
    .join('');
  return new RegExp(`^${source || '/'}/?$`);
}

/**
 * The methods each request path takes, from the routes of the app; read once the routes are all known
 * (the first time a path has no route for its method), and again only if routes were added since.
 */
export function methodIndex(routes: () => readonly RouteEntry[]) {
  let seen = -1;
  let table: Array<{ pattern: RegExp; method: string }> = [];
  return (path: string): string[] => {
    const all = routes();
    if (all.length !== seen) {
      seen = all.length;
      table = all
        .filter((r) => isRegisteredMethod(r.method))
        .map((r) => ({ pattern: patternOf(r.path), method: r.method }));
    }
    const methods = new Set<string>();
    for (const r of table) if (r.pattern.test(path)) methods.add(r.method);
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
