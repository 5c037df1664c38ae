import { eq } from 'drizzle-orm';
import { Elysia } from 'elysia';
import * as v from 'valibot';
import { createReplicaCache } from '../../core/cache/replica-cache.ts';
import { consistentWrite } from '../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../core/http/envelope.ts';
import { refuseArrayBody } from '../../core/http/object-body.ts';
import { consistencyHeaders } from '../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { SERVICE_CLAIMS } from '../../core/tokens/service-claims.ts';
import { personSettings } from './schema.ts';

export const DEFAULT_GROUPS_CLAIM = 'groups';

/** Claims a token always carries or the JWT registers: the groups cannot go under these names. */
export const TAKEN_CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'oid',
  'person_id',
  'authenticated_methods',
  'first_token',
  'region',
  'person_type',
  // Filled by other plugins (roles, consents) through serviceTokenClaims.
  ...SERVICE_CLAIMS,
];

const CLAIM_RULE = `must be a claim name of 1 to 64 letters, digits and _, not starting with a digit, and none of ${TAKEN_CLAIMS.join(', ')}`;

const SettingsSchema = v.object({
  groups_claim_name: v.pipe(
    v.string(),
    v.check((s) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(s) && !TAKEN_CLAIMS.includes(s), CLAIM_RULE),
    v.description(
      `The claim that carries a person's groups in identity tokens (default "${DEFAULT_GROUPS_CLAIM}").`,
    ),
  ),
});

/** How long a replica trusts a groups_claim_name it read; a change made on another replica counts within it. */
export const GROUPS_CLAIM_CACHE_MS = 5000;
export function createSettingsStore(storage: Storage, clock: Clock, cacheMs = GROUPS_CLAIM_CACHE_MS) {
  // Every token reads the claim name; it changes rarely, so a replica keeps it for cacheMs (the API
  // key cache's bound) and forgets it at once when it is set here.
  const cache = createReplicaCache<string>({ clock, ttlMs: cacheMs });
  const read = async (orgId: string) => {
    const [row] = await storage.db
      .select({ name: personSettings.groupsClaimName })
      .from(personSettings)
      .where(eq(personSettings.orgId, orgId));
    return row?.name ?? DEFAULT_GROUPS_CLAIM;
  };
  return {
    groupsClaimName: async (orgId: string): Promise<string> => cache.get(orgId, read),
    async setGroupsClaimName(orgId: string, name: string): Promise<void> {
      const updatedAt = new Date(clock.now());
      await cache.write(orgId, () =>
        storage.db
          .insert(personSettings)
          .values({ orgId, groupsClaimName: name, updatedAt })
          .onConflictDoUpdate({ target: personSettings.orgId, set: { groupsClaimName: name, updatedAt } }),
      );
    },
  };
}
export type SettingsStore = ReturnType<typeof createSettingsStore>;

/** GET, PUT /organizations/persons-settings: the organization's groups_claim_name. */
export function settingsRoutes(ctx: ServiceContext, store: SettingsStore) {
  const detail = (operationId: string, summary: string) => ({
    operationId,
    summary,
    description: `groups_claim_name names the claim that carries a person's groups in identity tokens; "${DEFAULT_GROUPS_CLAIM}" until set.`,
    tags: ['Persons'],
    security: [{ orgId: [], apiKey: [] }],
  });
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/organizations/persons-settings',
      async ({ org }) => ok({ groups_claim_name: await store.groupsClaimName(org.id) }),
      {
        apiKey: true,
        response: { 200: resultOf(SettingsSchema), ...errorResponses },
        detail: detail('GetOrganizationsPersonsSettings', "The organization's persons settings"),
      },
    )
    .put(
      '/organizations/persons-settings',
      async ({ org, body, request }) => {
        await consistentWrite(request, ctx.headers, () =>
          store.setGroupsClaimName(org.id, body.groups_claim_name),
        );
        return ok({ groups_claim_name: body.groups_claim_name });
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: SettingsSchema,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: resultOf(SettingsSchema), ...errorResponses, ...writeErrorResponses },
        detail: detail('PutOrganizationsPersonsSettings', "Set the organization's persons settings"),
      },
    );
}
