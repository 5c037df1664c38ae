import { eq } from 'drizzle-orm';
import { Elysia } from 'elysia';
import * as v from 'valibot';
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
const MAX_CACHED = 10_000;

/** An organization's roles settings, read by every token issuance, so a replica keeps them for a moment. */
export function createSettingsStore(storage: Storage, clock: Clock, cacheMs = SETTINGS_CACHE_MS) {
  const cache = new Map<string, { rolesInTokens: boolean; at: number }>();
  // Bumped by every set: a read that began before it may hold the old value and must not be cached.
  let writes = 0;
  return {
    async rolesInTokens(orgId: string): Promise<boolean> {
      const hit = cache.get(orgId);
      const now = clock.now();
      if (hit && now - hit.at < cacheMs) return hit.rolesInTokens;
      const seen = writes;
      const [row] = await storage.db
        .select({ on: rolesSettings.rolesInTokens })
        .from(rolesSettings)
        .where(eq(rolesSettings.orgId, orgId));
      const rolesInTokens = row?.on ?? false;
      if (seen !== writes) return rolesInTokens;
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(orgId, { rolesInTokens, at: now });
      return rolesInTokens;
    },
    async setRolesInTokens(orgId: string, on: boolean): Promise<void> {
      const updatedAt = new Date(clock.now());
      writes++;
      try {
        await storage.db
          .insert(rolesSettings)
          .values({ orgId, rolesInTokens: on, updatedAt })
          .onConflictDoUpdate({ target: rolesSettings.orgId, set: { rolesInTokens: on, updatedAt } });
      } finally {
        // Also after a failure: whether it was written is unknown, so the next read asks the database.
        writes++;
        cache.delete(orgId);
      }
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
