import { inArray } from 'drizzle-orm';
import { createBatchLoader } from '../../core/batching/batch-loader.ts';
import { batchingFor } from '../../core/batching/group-commit.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { serviceTokenClaims } from '../../core/tokens/service-claims.ts';
import { rolesPersonRoles } from './schema.ts';
import type { SettingsStore } from './settings.ts';
import { sortedUnique } from './store/name-order.ts';

/**
 * The `roles` claim: the person's role names, sorted, in every token issued for a person of an
 * organization that turned roles_in_tokens on. Issuances that arrive together share one query; nothing
 * is cached, so a token carries the roles as they are now. Organizations that left it off cost nothing.
 */
export function rolesClaim(storage: Storage, settings: SettingsStore) {
  const loader = createBatchLoader<Array<{ orgId: string; role: string }>>(
    async (personIds) => {
      const rows = await storage.db
        .select({
          personId: rolesPersonRoles.personId,
          orgId: rolesPersonRoles.orgId,
          role: rolesPersonRoles.roleName,
        })
        .from(rolesPersonRoles)
        .where(inArray(rolesPersonRoles.personId, personIds));
      const found = new Map<string, Array<{ orgId: string; role: string }>>();
      for (const { personId, ...held } of rows) {
        const list = found.get(personId);
        if (list) list.push(held);
        else found.set(personId, [held]);
      }
      return found;
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  return serviceTokenClaims.attach({
    async run({ orgId, personId }) {
      if (!(await settings.rolesInTokens(orgId))) return undefined;
      const held = (await loader.load(personId)) ?? [];
      return { roles: sortedUnique(held.filter((h) => h.orgId === orgId).map((h) => h.role)) };
    },
  });
}
