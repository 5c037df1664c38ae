import { openapi } from '@elysiajs/openapi';
import { toJsonSchema } from '@valibot/to-json-schema';
import { Elysia, type ElysiaAdapter } from 'elysia';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { bodyDepthIndex, checkBodyDepth } from './body-depth.ts';
import { MUTATING, markArrival } from './consistency.ts';
import { DOCS_PATHS, docsUi } from './docs-ui.ts';
import { errorEnvelope } from './envelope.ts';
import type { HeaderNames } from './headers.ts';
import { isRegisteredMethod, methodIndex } from './methods.ts';
import { checkPathParams } from './path-params.ts';
import { rememberRequestId, rememberRoute, requestLogFields } from './request-facts.ts';
import { requestIdOf } from './request-id.ts';
import { urlPathOf } from './request-target.ts';
import { formatIssues } from './validation.ts';

export interface HttpAppOptions {
  log: Logger;
  names: HeaderNames;
  version: string;
  adapter?: ElysiaAdapter;
  /** Record each request's route pattern for the request metrics (`routeOf`). @default false */
  recordRoutes?: boolean;
}

type StandardValidator = {
  '~standard': {
    validate(v: unknown): { issues?: readonly { message: string; path?: readonly PropertyKey[] }[] };
  };
};

/** A valibot schema as OpenAPI 3.1 wants it: JSON Schema 2020-12, without a `$schema` of its own. */
function openApiSchema(schema: Parameters<typeof toJsonSchema>[0]) {
  const { $schema: _, ...rest } = toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' });
  return rest;
}

/** Statuses whose responses have no body (RFC 9110); Deno refuses to build a Response that has one. */
const NULL_BODY = new Set([204, 205, 304]);

/** Where a JSON body went wrong, when the parser's message says so cheaply. */
function jsonProblem(request: Request, cause: unknown): string {
  const said = cause instanceof Error ? cause.message : '';
  const type = request.headers.get('content-type');
  const sentAs = type && !type.includes('json') ? ` (it was sent as ${type.split(';')[0]})` : '';
  if (/end of (json )?(input|data)|EOF/i.test(said))
    return `request body must be JSON: it ends before the JSON value is complete${sentAs}`;
  const at = /position (\d+)/.exec(said)?.[1];
  if (at) return `request body must be JSON: unexpected character at position ${at}${sentAs}`;
  return `request body must be JSON${sentAs}`;
}

/** Elysia's response headers as Headers, a header set more than once (set-cookie) included. */
function headersOf(set: Record<string, string | string[] | number | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(set)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.set(name, String(value));
  }
  return headers;
}

type Answer = { status: number; body: ReturnType<typeof errorEnvelope>; headers?: Record<string, string> };

/** The answer to a request no route takes: 501 for a method nobody knows, 405 with Allow, or 404. */
function noRoute(request: Request, allowed: (path: string) => string[]): Answer {
  const path = urlPathOf(request.url);
  const method = request.method;
  if (!isRegisteredMethod(method))
    return { status: 501, body: errorEnvelope(501, `method ${method} is not implemented by this service`) };
  const methods = allowed(path);
  if (methods.length && !methods.includes(method))
    return {
      status: 405,
      body: errorEnvelope(405, `method ${method} is not allowed on ${path}; allowed: ${methods.join(', ')}`),
      headers: { allow: methods.join(', ') },
    };
  return { status: 404, body: errorEnvelope(404, `no route for ${method} ${path}`) };
}

/** Turns any thrown value into the envelope, with the status it deserves. */
function toEnvelope(
  code: string | number,
  error: unknown,
  request: Request,
  allowed: (path: string) => string[],
): Answer {
  if (error instanceof ServiceError)
    return { status: error.status, body: errorEnvelope(error.status, error.message), headers: error.headers };
  if (code === 'NOT_FOUND') return noRoute(request, allowed);
  if (code === 'PARSE') {
    // The body limit and the request timeout error the request stream; the parser wraps that error.
    const cause = (error as Error).cause;
    if (cause instanceof ServiceError)
      return {
        status: cause.status,
        body: errorEnvelope(cause.status, cause.message),
        headers: cause.headers,
      };
    return { status: 400, body: errorEnvelope(400, jsonProblem(request, cause)) };
  }
  if (code === 'VALIDATION') {
    const e = error as { type?: string; validator?: unknown; value?: unknown; message?: string };
    const on = e.type ?? 'request';
    const v = e.validator as StandardValidator | { schema?: StandardValidator } | undefined;
    const standard = v && ('~standard' in v ? v : v.schema && '~standard' in v.schema ? v.schema : undefined);
    const issues = standard?.['~standard'].validate(e.value).issues;
    const message = issues?.length ? formatIssues(on, issues) : `${on}: ${e.message ?? 'invalid'}`;
    return { status: 400, body: errorEnvelope(400, message) };
  }
  if (code === 'INVALID_COOKIE_SIGNATURE' || code === 'INVALID_FILE_TYPE') {
    return { status: 400, body: errorEnvelope(400, String((error as Error).message)) };
  }
  return { status: 500, body: errorEnvelope(500, 'internal error') };
}

/**
 * The root Elysia app with the conventions of docs/api-contract.md: request ids, JSON logs, the body limit, the
 * envelope for every error (400 on validation, never 422), a JSON 404, consistency headers checked on
 * every state-changing request, and the OpenAPI document at /openapi.json with a UI at /docs.
 */
export function createHttpApp(options: HttpAppOptions) {
  const { log, names } = options;
  const recordRoutes = options.recordRoutes ?? false;
  const allowed = methodIndex(() => app.routes);
  const depthOf = bodyDepthIndex(() => app.routes);
  const app = new Elysia({
    ...(options.adapter ? { adapter: options.adapter } : {}),
  })
    .use(
      openapi({
        // The page is docsUi's, served from the installed package; this plugin gives the document only.
        provider: null,
        specPath: '/openapi.json',
        mapJsonSchema: { valibot: openApiSchema },
        documentation: {
          info: {
            title: 'Identity service',
            version: options.version,
            description: 'Webhooks, events, tokens, SSO credentials, attributes and OAuth 2.0.',
          },
          components: {
            securitySchemes: {
              orgId: { type: 'apiKey', in: 'header', name: names.orgId },
              apiKey: { type: 'apiKey', in: 'header', name: names.apiKey },
              // OAuth 2.0 clients at the token, introspection and revocation endpoints (or form fields).
              clientBasic: { type: 'http', scheme: 'basic' },
            },
          },
        },
        // staticFile: the plugin would otherwise leave out every path with a dot in it, such as
        // /.well-known/jwks.json; the docs' own files are named in `paths` instead.
        exclude: { staticFile: false, paths: ['/docs', '/openapi.json', ...DOCS_PATHS] },
      }),
    )
    .use(docsUi())
    .onRequest(({ request, set }) => {
      const id = requestIdOf(request.headers);
      rememberRequestId(request, id);
      set.headers['x-request-id'] = id;
      if (MUTATING.has(request.method)) markArrival(request);
    })
    // Every routed request passes here (before its guards and handler) with the pattern of its route:
    // naming `route` makes Elysia set it, a constant per route, on each request's context.
    .onTransform(({ body, params, request, route }) => {
      if (recordRoutes) rememberRoute(request, route);
      checkPathParams(params, route, request.url);
      if (typeof body === 'object' && body !== null) checkBodyDepth(body, depthOf(request.method, route));
    })
    // A null-body status gets no body at all: Elysia would build one ('' for a handler returning
    // nothing), which Deno refuses after the handler has run (a 500 for a committed write).
    // (onAfterHandle, not mapResponse: a mapResponse hook empties the bodies onError returns.)
    .onAfterHandle({ as: 'global' }, ({ response, set }) => {
      if (response instanceof Response || typeof set.status !== 'number' || !NULL_BODY.has(set.status))
        return;
      return new Response(null, { status: set.status, headers: headersOf(set.headers) });
    })
    .onError(({ code, error, request, route, set }) => {
      // A body that is not JSON fails before the transform: the route is known here too.
      if (recordRoutes && route) rememberRoute(request, route);
      const { status, body, headers } = toEnvelope(code, error, request, allowed);
      const facts = requestLogFields(request);
      if (status >= 500)
        log.error('request failed', {
          err: error,
          ...facts,
          method: request.method,
          path: urlPathOf(request.url),
        });
      set.status = status;
      if (facts.request_id) set.headers['x-request-id'] = facts.request_id;
      if (headers) Object.assign(set.headers, headers);
      set.headers['content-type'] = 'application/json';
      return body;
    });
  return app;
}
