import { CoreErrors } from '../errors.ts';

/** What a direct route answers: its status, its headers and its body (text; '' for none). */
export interface DirectAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * A route the front door answers itself, ahead of the app's router and hooks: for the few endpoints
 * whose cost per request is the product (the OAuth token endpoint), where the app's general path (the
 * body copied into a new request, the global hooks, the response mapping) costs as much as the work.
 * Matched by exact method and path; the request still gets its `x-request-id`, its log line, its
 * metrics, the body limit and the request timeout, its arrival noted for `consistentWrite`, and the
 * route's errors the envelope. What the app's routes get from Elysia (the organization guard, schema
 * validation) a direct route does itself.
 *
 * The front door takes a request here only when its body declares a length it can read whole (up to
 * 64 KiB and the body limit); any other request (a streamed body, an oversized one) goes to the app, so
 * a plugin declares the same route in its `routes` too, where it is also documented in OpenAPI.
 *
 * @example
 * direct: [{ method: 'POST', path: '/hello', handle: async (request, body) => ({ status: 200, headers: {}, body }) }]
 */
export interface DirectRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /**
   * Answers the request; `body` is its body read whole as UTF-8 text. It may answer at once rather
   * than by a promise (each promise a request waits for costs it a turn of the microtask queue). A
   * ServiceError thrown (or rejected) is answered as the app answers it: the envelope with its status,
   * message and headers; anything else answers 500 and is logged.
   */
  handle(request: Request, body: string): DirectAnswer | Promise<DirectAnswer>;
}

/** Direct routes by `METHOD path`, refusing two routes on one method and path. */
export function directRouteTable(routes: readonly DirectRoute[]): Map<string, DirectRoute> {
  const table = new Map<string, DirectRoute>();
  for (const route of routes) {
    const key = `${route.method} ${route.path}`;
    if (table.has(key)) throw new Error(`two direct routes answer ${key}`);
    table.set(key, route);
  }
  return table;
}

const DIGITS = /^\d+$/;

/**
 * The length of the body a direct route may read whole, or undefined when the request must take the
 * app's path: a length that is not a plain number (the app answers 400), above `max` (413 or a stream),
 * or a body without a declared length (chunked, or a stream handed over in-process).
 */
export function directBodyLength(request: Request, max: number): number | undefined {
  const declared = request.headers.get('content-length');
  // Only asked when no length is declared: reading `body` makes some runtimes build a stream.
  if (declared === null) return request.body === null ? 0 : undefined;
  if (!DIGITS.test(declared)) return undefined;
  const length = Number(declared);
  return length <= max ? length : undefined;
}

/** The body as text, rejecting with the 408 when it has not arrived whole within `timeoutMs`. */
export function bodyTextWithin(request: Request, length: number, timeoutMs: number): Promise<string> {
  if (length === 0) return Promise.resolve('');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(CoreErrors.REQUEST_TIMEOUT.with({ headers: { connection: 'close' } })(timeoutMs)),
      timeoutMs,
    );
    request.text().then(
      (text) => {
        clearTimeout(timer);
        resolve(text);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
