import * as v from 'valibot';
import type { HeaderNames } from './headers.ts';

/**
 * A schema that documents without validating: the OpenAPI document shows `doc`, while requests pass as
 * they are (the route checks them itself, with messages naming the field and the rule).
 */
export function passThrough<S extends v.GenericSchema>(doc: S): S {
  const standard = {
    version: 1 as const,
    vendor: 'valibot',
    validate: (value: unknown) => ({ value }),
  };
  return Object.defineProperty({ ...doc }, '~standard', { value: standard, enumerable: false }) as S;
}

const consistencyEntries = (names: HeaderNames) => ({
  [names.consistency]: v.optional(
    v.pipe(
      v.picklist(['local_region', 'all_regions']),
      v.description(
        'The answer waits until the write is visible to every replica of that scope; with one region, all_regions waits for the same.',
      ),
    ),
    'local_region',
  ),
  [names.consistencyTimeout]: v.optional(
    v.pipe(
      v.number(),
      v.integer(),
      v.minValue(1),
      v.maxValue(120),
      v.description('Seconds to wait for the consistency level; past it: 408.'),
    ),
    30,
  ),
});

/**
 * The consistency headers of a state-changing route, for the OpenAPI document in the deployment's
 * spelling; the organization guard checks them once the caller is known.
 */
export const consistencyHeaders = (names: HeaderNames) => passThrough(v.object(consistencyEntries(names)));

/**
 * The headers of a write that takes If-Match (RFC 9110): the consistency headers and If-Match, which
 * the route checks itself (`ifMatchOf`, then `requireIfMatch` under the write's lock).
 */
export const ifMatchHeaders = (names: HeaderNames) =>
  passThrough(
    v.object({
      'If-Match': v.optional(
        v.pipe(
          v.string(),
          v.description(
            'The ETag of the GET: the write is made only if it still names the current state (412 otherwise, nothing written). Omitted: no check. * matches any state.',
          ),
        ),
      ),
      ...consistencyEntries(names),
    }),
  );

/** The error envelope's JSON Schema, as the OpenAPI document shows it. */
export const ErrorJson = {
  type: 'object' as const,
  properties: {
    errors: {
      type: 'array' as const,
      items: {
        type: 'object' as const,
        properties: { httpcode: { type: 'integer' as const }, message: { type: 'string' as const } },
      },
    },
  },
};

/** An error answer written out for the OpenAPI document (routes whose responses sit in `detail`). */
export const errorDoc = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorJson } },
});

/**
 * The errors of `errorResponses`, for `detail.responses`: a route whose success has no body (a 204)
 * documents its answers there, because a `response` map replaces `detail.responses` in the document.
 */
export const errorDocs = {
  400: errorDoc('A parameter, header or the body breaks its rule; the message names it'),
  401: errorDoc('No API key, or not a valid one'),
  403: errorDoc('A key of another organization'),
  404: errorDoc('Not found in this organization'),
};

/** The answers every state-changing route may give beyond its own, for `detail.responses`. */
export const writeErrorDocs = {
  408: errorDoc('The consistency level was not reached within the timeout; the write may still land'),
  413: errorDoc('The request body is larger than the limit (BODY_LIMIT)'),
};

/** The security of a route an organization's API key opens, for the OpenAPI document. */
export const API_KEY_SECURITY = [{ orgId: [], apiKey: [] }];

/**
 * The `detail` of a plugin's routes for the OpenAPI document, made once per route file with the tags
 * its routes share: `const detail = routeDetail(['Persons'])`, then
 * `detail: detail('GetPersonsPersonIdGroups', "A person's groups", 'Sorted by name.')`.
 */
export const routeDetail =
  (tags: string[], security: Record<string, string[]>[] = API_KEY_SECURITY) =>
  (operationId: string, summary: string, description?: string) => ({
    operationId,
    summary,
    ...(description ? { description } : {}),
    tags,
    security,
  });
