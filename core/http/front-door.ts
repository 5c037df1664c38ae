import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { RequestObserver } from '../metrics/http.ts';
import { type AdmittedRequest, admitBody, BUFFERED_BODY_MAX } from './body.ts';
import { rememberClientPeer } from './client.ts';
import { MUTATING, markArrival } from './consistency.ts';
import {
  bodyTextWithin,
  type DirectAnswer,
  type DirectRoute,
  directBodyLength,
  directRouteTable,
} from './direct-routes.ts';
import { errorEnvelope } from './envelope.ts';
import { rememberRequestId, requestLogFields, requestOrgOf, routeOf } from './request-facts.ts';
import { requestIdOf } from './request-id.ts';
import { routableRequest, urlPathOf } from './request-target.ts';

export interface FrontDoorOptions {
  /** The request body limit in bytes. */
  bodyLimit: number;
  /** How long a request body may take to arrive before the answer is 408. @default 10000 */
  requestTimeoutMs?: number;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 trusts no header. @default 0 */
  trustedProxyHops?: number;
  log: Logger;
  /** Where each answer is counted, with its route pattern, status and latency. @default none */
  requests?: RequestObserver;
  /** Routes answered here, ahead of the app (see `DirectRoute`). @default none */
  direct?: readonly DirectRoute[];
}

/** Statuses whose responses have no body (RFC 9110): Deno refuses to build one that has, Bun sends it. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The response as HTTP allows it: a null-body status with a body loses the body, nothing else. */
function bodyAsAllowed(response: Response): Response {
  // The status first: reading `body` makes the runtime turn a plain body into a stream, which it then
  // sends far more slowly (measured on Bun: a third of the token endpoint's throughput).
  if (!NULL_BODY.has(response.status) || response.body === null) return response;
  void response.body.cancel().catch(() => {});
  return new Response(null, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * What every request passes before the app: a URL the router can use whatever the Host header said,
 * the body limit and the request timeout; and where each answer is logged, with the status it really
 * had, its route pattern and latency counted, and the organization it acted for named (`org_id`). A
 * refusal here is the usual envelope, with a request id and a log line. `peer` is the socket's
 * remote address as the runtime's server reports it; with the trusted proxy setting it gives the
 * client's address that `requestContextOf` answers.
 */
export function frontDoor(handle: (request: Request) => Promise<Response>, options: FrontDoorOptions) {
  const { bodyLimit, log } = options;
  const rules = { limit: bodyLimit, timeoutMs: options.requestTimeoutMs ?? 10_000 };
  const hops = options.trustedProxyHops ?? 0;
  const requests = options.requests;
  const direct = directRouteTable(options.direct ?? []);
  const directMax = Math.min(bodyLimit, BUFFERED_BODY_MAX);
  /** Counts and logs an answer (the log line only when info is on: it is built for nothing otherwise). */
  const record = (
    request: Request,
    route: string | undefined,
    status: number,
    start: number,
    id: string | null | undefined,
    orgId?: string,
  ) => {
    const ms = performance.now() - start;
    requests?.observe(request.method, route, status, ms / 1000);
    if (log.enabled('info'))
      log.info('request', {
        request_id: id,
        // Left out of the line (JSON drops undefined) until a guard authenticates an organization.
        org_id: orgId,
        method: request.method,
        path: urlPathOf(request.url),
        status,
        ms: Math.round(ms * 100) / 100,
      });
  };
  const refuse = (request: Request, e: unknown, start: number, id = requestIdOf(request.headers)) => {
    const status = e instanceof ServiceError ? e.status : 400;
    const message = e instanceof ServiceError ? e.message : 'the request could not be read';
    record(request, undefined, status, start, id);
    const headers = { ...(e instanceof ServiceError ? e.headers : undefined), 'x-request-id': id };
    return Response.json(errorEnvelope(status, message), { status, headers });
  };
  const answerDirect = (
    route: DirectRoute,
    request: Request,
    length: number,
    peer: string | undefined,
    start: number,
  ): Promise<Response> => {
    const id = requestIdOf(request.headers);
    rememberRequestId(request, id);
    rememberClientPeer(request, peer, hops);
    // A direct route's write under consistency headers counts its timeout from here, as the app's do.
    if (MUTATING.has(request.method)) markArrival(request);
    const answered = (answer: DirectAnswer): Response => {
      const status = answer.status;
      let response: Response;
      try {
        response = new Response(NULL_BODY.has(status) ? null : answer.body, {
          status,
          headers: { ...answer.headers, 'x-request-id': id },
        });
      } catch (e) {
        // A status or a header value no Response can carry: the route's fault, answered as one.
        return failed(e);
      }
      record(request, route.path, status, start, id, requestOrgOf(request));
      return response;
    };
    // A ServiceError is answered as the app's routes answer it (its status, message and headers);
    // anything else is a 500, logged.
    const failed = (err: unknown): Response => {
      const known = err instanceof ServiceError;
      const status = known ? err.status : 500;
      if (status >= 500)
        log.error('request failed', {
          err,
          ...requestLogFields(request),
          method: request.method,
          path: route.path,
        });
      record(request, route.path, status, start, id, requestOrgOf(request));
      return Response.json(errorEnvelope(status, known ? err.message : 'internal error'), {
        status,
        headers: { ...(known ? err.headers : undefined), 'x-request-id': id },
      });
    };
    return bodyTextWithin(request, length, rules.timeoutMs).then(
      (body) => {
        let answer: DirectAnswer | Promise<DirectAnswer>;
        try {
          answer = route.handle(request, body);
        } catch (e) {
          return failed(e);
        }
        return answer instanceof Promise ? answer.then(answered, failed) : answered(answer);
      },
      (e: unknown) => refuse(request, e, start, id),
    );
  };
  const run = (
    request: Request,
    admitted: AdmittedRequest,
    peer: string | undefined,
    start: number,
  ): Promise<Response> => {
    rememberClientPeer(admitted.request, peer, hops);
    return handle(admitted.request).then(
      (answer) => {
        admitted.settle();
        const response = bodyAsAllowed(answer);
        record(
          request,
          routeOf(admitted.request),
          response.status,
          start,
          log.enabled('info') ? response.headers.get('x-request-id') : undefined,
          requestOrgOf(admitted.request),
        );
        return response;
      },
      (e) => {
        admitted.settle();
        throw e;
      },
    );
  };
  return (request: Request, peer?: string): Promise<Response> => {
    // From arrival: a body read ahead of the app (buffered, or refused) counts in the latency.
    const start = performance.now();
    if (direct.size > 0) {
      const route = direct.get(`${request.method} ${urlPathOf(request.url)}`);
      const length = route && directBodyLength(request, directMax);
      if (route && length !== undefined) return answerDirect(route, request, length, peer, start);
    }
    let admitted: AdmittedRequest | Promise<AdmittedRequest>;
    try {
      admitted = admitBody(routableRequest(request), rules);
    } catch (e) {
      return Promise.resolve(refuse(request, e, start));
    }
    if (admitted instanceof Promise)
      return admitted.then(
        (a) => run(request, a, peer, start),
        (e) => refuse(request, e, start),
      );
    return run(request, admitted, peer, start);
  };
}
