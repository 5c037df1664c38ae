import { eq } from 'drizzle-orm';
import * as v from 'valibot';
import { createReplicaCache } from '../../core/cache/replica-cache.ts';
import { organizationSettingsRoutes } from '../../core/http/settings-routes.ts';
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
  return organizationSettingsRoutes(ctx, {
    path: '/organizations/persons-settings',
    schema: SettingsSchema,
    operation: 'OrganizationsPersonsSettings',
    subject: 'persons',
    tag: 'Persons',
    description: `groups_claim_name names the claim that carries a person's groups in identity tokens; "${DEFAULT_GROUPS_CLAIM}" until set.`,
    read: async (orgId) => ({ groups_claim_name: await store.groupsClaimName(orgId) }),
    write: (orgId, s) => store.setGroupsClaimName(orgId, s.groups_claim_name),
  });
}
