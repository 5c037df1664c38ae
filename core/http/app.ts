import { openapi } from '@elysiajs/openapi';
import { toJsonSchema } from '@valibot/to-json-schema';
import { Elysia, type ElysiaAdapter } from 'elysia';
import { ServiceError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { checkBodyDepth } from './body-depth.ts';
import { MUTATING, markArrival } from './consistency.ts';
import { errorEnvelope } from './envelope.ts';
import type { HeaderNames } from './headers.ts';
import { requestIdOf } from './request-id.ts';
import { urlPathOf } from './request-target.ts';
import { formatIssues } from './validation.ts';

export interface HttpAppOptions {
  log: Logger;
  names: HeaderNames;
  version: string;
  adapter?: ElysiaAdapter;
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

/** Turns any thrown value into the envelope, with the status it deserves. */
function toEnvelope(
  code: string | number,
  error: unknown,
  request: Request,
): { status: number; body: ReturnType<typeof errorEnvelope>; headers?: Record<string, string> } {
  if (error instanceof ServiceError)
    return { status: error.status, body: errorEnvelope(error.status, error.message), headers: error.headers };
  if (code === 'NOT_FOUND')
    return {
      status: 404,
      body: errorEnvelope(404, `no route for ${request.method} ${urlPathOf(request.url)}`),
    };
  if (code === 'PARSE') {
    // The body limit errors the request stream; the parser wraps that error.
    const cause = (error as Error).cause;
    if (cause instanceof ServiceError)
      return { status: cause.status, body: errorEnvelope(cause.status, cause.message) };
    const json = (request.headers.get('content-type') ?? '').includes('json');
    return {
      status: 400,
      body: errorEnvelope(
        400,
        json ? 'request body is not valid JSON' : 'request body could not be parsed for its content-type',
      ),
    };
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
 * The root Elysia app with the conventions of API.md: request ids, JSON logs, the body limit, the
 * envelope for every error (400 on validation, never 422), a JSON 404, consistency headers checked on
 * every state-changing request, and the OpenAPI document at /openapi.json with a UI at /docs.
 */
export function createHttpApp(options: HttpAppOptions) {
  const { log, names } = options;
  const ids = new WeakMap<Request, string>();
  return new Elysia({
    ...(options.adapter ? { adapter: options.adapter } : {}),
  })
    .use(
      openapi({
        path: '/docs',
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
            },
          },
        },
        exclude: { paths: ['/docs', '/openapi.json'] },
      }),
    )
    .onRequest(({ request, set }) => {
      const id = requestIdOf(request.headers);
      ids.set(request, id);
      set.headers['x-request-id'] = id;
      if (MUTATING.has(request.method)) markArrival(request);
    })
    .onTransform(({ body }) => checkBodyDepth(body))
    .onError(({ code, error, request, set }) => {
      const { status, body, headers } = toEnvelope(code, error, request);
      const id = ids.get(request);
      if (status >= 500)
        log.error('request failed', {
          err: error,
          request_id: id,
          method: request.method,
          path: urlPathOf(request.url),
        });
      set.status = status;
      if (id) set.headers['x-request-id'] = id;
      if (headers) Object.assign(set.headers, headers);
      set.headers['content-type'] = 'application/json';
      return body;
    });
}
