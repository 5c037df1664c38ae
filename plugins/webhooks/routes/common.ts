import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import type { HeaderNames } from '../../../core/http/headers.ts';

export const TAG = 'Organization Webhooks';
export const OPERATOR_TAG = 'Webhook deliveries';

/**
 * The consistency headers for the OpenAPI document. Their keys keep the deployment's spelling, which
 * Elysia's lower-cased header record never carries, so this schema documents without validating twice:
 * the HTTP conventions validate the headers on every state-changing request already.
 */
export const consistencyHeaders = (names: HeaderNames) =>
  v.looseObject({
    [names.consistency]: v.optional(
      v.pipe(
        v.picklist(['local_region', 'all_regions']),
        v.description(
          'Default local_region: the response waits until the write is visible to every replica of that scope; 408 past the timeout (the write may still land).',
        ),
      ),
    ),
    [names.consistencyTimeout]: v.optional(
      v.pipe(v.string(), v.description('Seconds to wait for the consistency level, 1 to 120 (default 30).')),
    ),
  });

/** The envelope of an error, for responses documented by hand. */
export const errorDoc = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: {
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
      },
    },
  },
});

/** Runs a write under the request's consistency headers (validated already by the HTTP conventions). */
export const consistent = <T>(request: Request, names: HeaderNames, write: () => Promise<T>): Promise<T> =>
  consistentWrite(request, names, write);

export const apiKeySecurity = [{ orgId: [], apiKey: [] }];
export const orgOnlySecurity = [{ orgId: [] }];
