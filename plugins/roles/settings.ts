import { eq } from 'drizzle-orm';
import * as v from 'valibot';
import { createReplicaCache } from '../../core/cache/replica-cache.ts';
import { organizationSettingsRoutes } from '../../core/http/settings-routes.ts';
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
  return organizationSettingsRoutes(ctx, {
    path: '/organizations/roles-settings',
    schema: SettingsSchema,
    operation: 'OrganizationsRolesSettings',
    subject: 'roles',
    tag: 'Roles and permissions',
    description:
      "roles_in_tokens: identity tokens issued afterwards carry the person's role names, sorted, under the claim `roles` (false until set). A replica caches it for 5 s.",
    read: async (orgId) => ({ roles_in_tokens: await store.rolesInTokens(orgId) }),
    write: (orgId, s) => store.setRolesInTokens(orgId, s.roles_in_tokens),
  });
}
