/**
 * What the service learns about a request while it handles it, for its log lines and metrics: its id,
 * the route that took it and the organization it acts for. Kept beside the request (weakly: nothing
 * outlives it), set by the app's hooks and the organization guard, read by the front door.
 */
const ids = new WeakMap<Request, string>();
const routes = new WeakMap<Request, string>();
const orgs = new WeakMap<Request, string>();

/** Records the request id the app answers with (`x-request-id`). */
export function rememberRequestId(request: Request, id: string): void {
  ids.set(request, id);
}

/** The request id, once the app has given the request one. */
export const requestIdFor = (request: Request): string | undefined => ids.get(request);

/** Records the pattern of the route that took the request (`/persons/:person_id`), never its path. */
export function rememberRoute(request: Request, route: string): void {
  routes.set(request, route);
}

/** The route pattern that took the request, or undefined when none did. */
export const routeOf = (request: Request): string | undefined => routes.get(request);

/**
 * Records the organization a request acts for, once it is authenticated as that organization's (the
 * organization guard does it; a plugin that authenticates in its own way, such as an OAuth client,
 * calls it too). Its log lines carry it as `org_id`.
 *
 * @example const client = await authenticate(request); setRequestOrg(request, client.orgId);
 */
export function setRequestOrg(request: Request, orgId: string): void {
  orgs.set(request, orgId);
}

/** The organization the request was authenticated for, if any. */
export const requestOrgOf = (request: Request): string | undefined => orgs.get(request);

/**
 * The fields that tie a log line to its request: `request_id`, and `org_id` once the caller is
 * authenticated for an organization. For error lines written while handling a request.
 *
 * @example log.error('lookup failed', { ...requestLogFields(request), err });
 */
export function requestLogFields(request: Request): { request_id?: string; org_id?: string } {
  const id = ids.get(request);
  const org = orgs.get(request);
  return { ...(id ? { request_id: id } : {}), ...(org ? { org_id: org } : {}) };
}
