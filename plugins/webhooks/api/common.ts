import { consistentWrite } from '../../../core/http/consistency.ts';
import type { HeaderNames } from '../../../core/http/headers.ts';
import { API_KEY_SECURITY } from '../../../core/http/openapi-docs.ts';

export const TAG = 'Organization Webhooks';
export const OPERATOR_TAG = 'Webhook deliveries';

// OpenAPI helpers shared with every plugin.
export { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';

/** Runs a write under the request's consistency headers (validated already by the HTTP conventions). */
export const consistent = <T>(request: Request, names: HeaderNames, write: () => Promise<T>): Promise<T> =>
  consistentWrite(request, names, write);

export const apiKeySecurity = API_KEY_SECURITY;
export const orgOnlySecurity = [{ orgId: [] }];
