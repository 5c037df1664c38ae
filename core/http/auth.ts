import { Elysia } from 'elysia';
import { CoreErrors } from '../errors.ts';
import { isUuid } from '../ids.ts';
import type { OrganizationStore } from '../organizations/store.ts';
import { MUTATING, parseConsistency } from './consistency.ts';
import type { HeaderNames } from './headers.ts';
import { requestOrgOf, setRequestOrg } from './request-facts.ts';

export interface OrgAuthDeps {
  orgs: OrganizationStore;
  names: HeaderNames;
  /** Distinguishes the services of one process (tests make many). */
  seed: string;
}

/** A client's value as echoed in a message: at most 64 characters. */
const shown = (value: string) => (value.length > 64 ? `${value.slice(0, 64)}…` : value);

function orgIdOf(headers: Headers, names: HeaderNames): string {
  const orgId = headers.get(names.orgId);
  if (orgId === null || orgId.trim() === '')
    throw CoreErrors.MISSING_ORG_ID(`header ${names.orgId} is required`);
  if (!isUuid(orgId.trim()))
    throw CoreErrors.MISSING_ORG_ID(
      `header ${names.orgId} must be an organization ID (a UUID); got ${JSON.stringify(shown(orgId))}`,
    );
  return orgId.trim().toLowerCase();
}

/**
 * The organization guard, as Elysia macros:
 * - `apiKey: true`: `Service-OrgID` and a `Service-API-Key` of that organization (401 missing or bad
 *   key, 403 a key of another organization); the handler receives `org.id`.
 * - `orgOnly: true`: `Service-OrgID` of an existing organization, no key (public endpoints such as JWKS).
 * Either way, once the organization is settled the request's log line carries it as `org_id`, and a
 * state-changing request's consistency headers are checked (400 for a value outside the rules).
 */
export function orgAuth(deps: OrgAuthDeps) {
  const { orgs, names } = deps;
  /** The organization settled by a guard's transform, for its resolve. */
  const settled = (request: Request) => ({ org: { id: requestOrgOf(request) ?? '' } });
  // The checks run in the transform phase, before the body is validated: a caller without a valid key
  // gets 401 (or 403) whatever its body, never a 400 that describes the route's schema, and a valid
  // caller's failed validation is logged with its org_id.
  return new Elysia({ name: 'org-auth', seed: deps.seed }).macro({
    apiKey: {
      async transform({ request }) {
        const orgId = orgIdOf(request.headers, names);
        const key = request.headers.get(names.apiKey);
        if (key === null || key === '') throw CoreErrors.MISSING_API_KEY(names.apiKey);
        const check = await orgs.checkKey(key.trim());
        if (!check.ok) throw CoreErrors.INVALID_API_KEY(names.apiKey);
        if (check.orgId !== orgId) {
          throw CoreErrors.WRONG_ORGANIZATION(names.apiKey, orgId);
        }
        setRequestOrg(request, orgId);
        // Checked once the caller is known, so 401 and 403 (and 404, before any route) come first.
        if (MUTATING.has(request.method)) parseConsistency(request.headers, names);
      },
      resolve: ({ request }) => settled(request),
    },
    orgOnly: {
      async transform({ request }) {
        const orgId = orgIdOf(request.headers, names);
        if (!(await orgs.get(orgId))) throw CoreErrors.ORGANIZATION_NOT_FOUND(orgId);
        setRequestOrg(request, orgId);
        // End-user writes (sign-in, anonymous persons, resets) take the consistency headers as well.
        if (MUTATING.has(request.method)) parseConsistency(request.headers, names);
      },
      resolve: ({ request }) => settled(request),
    },
  });
}

export type OrgAuth = ReturnType<typeof orgAuth>;
