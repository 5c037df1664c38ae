import { eq } from 'drizzle-orm';
import * as v from 'valibot';
import { createReplicaCache } from '../../core/cache/replica-cache.ts';
import { organizationSettingsRoutes } from '../../core/http/settings-routes.ts';
import type { ServiceContext } from '../../core/plugin.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { DEFAULT_GROUPS_CLAIM, isFreeGroupsClaimName } from '../../core/tokens/reserved-claims.ts';
import { personSettings } from './schema.ts';

const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const NAME_RULE = 'must be a claim name of 1 to 64 letters, digits and _, not starting with a digit';

/**
 * The settings body. A name the service sets or reserves is refused (the groups would replace that claim
 * in every token): the one list is core/tokens/reserved-claims.ts, with the deployment's header prefix.
 */
const settingsSchema = (headerPrefix: string) =>
  v.object({
    groups_claim_name: v.pipe(
      v.string(),
      v.regex(CLAIM_NAME, NAME_RULE),
      v.check(
        (s) => isFreeGroupsClaimName(s, headerPrefix),
        (issue) =>
          `${JSON.stringify(issue.input)} is a registered or reserved claim; the groups cannot go under a claim the service sets or reserves`,
      ),
      v.description(
        `The claim that carries a person's groups in identity tokens (default "${DEFAULT_GROUPS_CLAIM}"); ${NAME_RULE}, never a registered or reserved claim.`,
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
    schema: settingsSchema(ctx.config.headerPrefix),
    operation: 'OrganizationsPersonsSettings',
    subject: 'persons',
    tag: 'Persons',
    description: `groups_claim_name names the claim that carries a person's groups in identity tokens; "${DEFAULT_GROUPS_CLAIM}" until set.`,
    read: async (orgId) => ({ groups_claim_name: await store.groupsClaimName(orgId) }),
    write: (orgId, s) => store.setGroupsClaimName(orgId, s.groups_claim_name),
  });
}
