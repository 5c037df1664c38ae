import { Elysia } from 'elysia';
import * as v from 'valibot';
import { CoreErrors } from '../errors.ts';
import type { OrgAuth } from '../http/auth.ts';
import { errorResponses, ok, resultOf } from '../http/envelope.ts';
import { uuidString } from '../ids.ts';
import type { Organization, OrganizationStore } from './store.ts';

const OrganizationSchema = v.object({
  id: uuidString(),
  org_name: v.string(),
  tenant_name: v.string(),
  created_at: v.pipe(v.string(), v.isoTimestamp()),
});

export const toOrganizationJson = (o: Organization) => ({
  id: o.id,
  org_name: o.name,
  tenant_name: o.name,
  created_at: o.createdAt.toISOString(),
});

/** `GET /organizations`: the organization the API key belongs to. */
export const organizationRoutes = (orgs: OrganizationStore, auth: OrgAuth) =>
  new Elysia().use(auth).get(
    '/organizations',
    async ({ org }) => {
      const found = await orgs.get(org.id);
      if (!found) throw CoreErrors.ORGANIZATION_NOT_FOUND(org.id);
      return ok(toOrganizationJson(found));
    },
    {
      apiKey: true,
      response: { 200: resultOf(OrganizationSchema), ...errorResponses },
      detail: {
        summary: "The caller's organization",
        tags: ['Organizations'],
        security: [{ orgId: [], apiKey: [] }],
      },
    },
  );
