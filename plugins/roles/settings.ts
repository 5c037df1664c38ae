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
import { rolesSettings } from './schema.ts';

const SettingsSchema = v.object({
  roles_in_tokens: v.pipe(
    v.boolean('must be true or false'),
    v.description(
      "Whether identity tokens carry the person's roles under the claim `roles` (default false).",
    ),
  ),
});

/** How long a replica trusts a setting it read; a change made on another replica counts within it. */
export const SETTINGS_CACHE_MS = 5000;

/** An organization's roles settings, read by every token issuance, so a replica keeps them for a moment. */
export function createSettingsStore(storage: Storage, clock: Clock, cacheMs = SETTINGS_CACHE_MS) {
  const cache = createReplicaCache<boolean>({ clock, ttlMs: cacheMs });
  const read = async (orgId: string) => {
    const [row] = await storage.db
      .select({ on: rolesSettings.rolesInTokens })
      .from(rolesSettings)
      .where(eq(rolesSettings.orgId, orgId));
    return row?.on ?? false;
  };
  return {
    rolesInTokens: async (orgId: string): Promise<boolean> => cache.get(orgId, read),
    async setRolesInTokens(orgId: string, on: boolean): Promise<void> {
      const updatedAt = new Date(clock.now());
      await cache.write(orgId, () =>
        storage.db
          .insert(rolesSettings)
          .values({ orgId, rolesInTokens: on, updatedAt })
          .onConflictDoUpdate({ target: rolesSettings.orgId, set: { rolesInTokens: on, updatedAt } }),
      );
    },
  };
}
export type SettingsStore = ReturnType<typeof createSettingsStore>;

/** GET, PUT /organizations/roles-settings: whether tokens carry roles. */
export function settingsRoutes(ctx: ServiceContext, store: SettingsStore) {
  const detail = (operationId: string, summary: string) => ({
    operationId,
    summary,
    description:
      "roles_in_tokens: identity tokens issued afterwards carry the person's role names, sorted, under the claim `roles` (false until set). A replica caches it for 5 s.",
    tags: ['Roles and permissions'],
    security: [{ orgId: [], apiKey: [] }],
  });
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/organizations/roles-settings',
      async ({ org }) => ok({ roles_in_tokens: await store.rolesInTokens(org.id) }),
      {
        apiKey: true,
        response: { 200: resultOf(SettingsSchema), ...errorResponses },
        detail: detail('GetOrganizationsRolesSettings', "The organization's roles settings"),
      },
    )
    .put(
      '/organizations/roles-settings',
      async ({ org, body, request }) => {
        await consistentWrite(request, ctx.headers, () =>
          store.setRolesInTokens(org.id, body.roles_in_tokens),
        );
        return ok({ roles_in_tokens: body.roles_in_tokens });
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: SettingsSchema,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: resultOf(SettingsSchema), ...errorResponses, ...writeErrorResponses },
        detail: detail('PutOrganizationsRolesSettings', "Set the organization's roles settings"),
      },
    );
}
