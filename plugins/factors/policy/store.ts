import { eq } from 'drizzle-orm';
import {
  type AuthenticationPolicies,
  type AuthenticationPolicy,
  defaultPolicy,
} from '../../../core/factors/policy.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { factorsPolicies, type StoredPolicy } from '../schema.ts';

/**
 * The organizations' policies: read from storage at each call (one primary-key read), so a change made
 * on one replica holds on every replica at the next sign-in. An organization that never set one has
 * defaultPolicy.
 */
export function createPolicyStore(deps: { storage: Storage; clock: Clock; publicBaseUrl: string }) {
  const t = factorsPolicies;
  const fallback = defaultPolicy(deps.publicBaseUrl);
  const inForce = (stored: StoredPolicy | undefined): AuthenticationPolicy =>
    stored
      ? {
          firstFactors: [...stored.firstFactors],
          secondFactor: stored.secondFactor,
          secondFactors: [...stored.secondFactors],
          webauthn: stored.webauthn ?? fallback.webauthn,
        }
      : fallback;
  return {
    async get(orgId: string): Promise<AuthenticationPolicy> {
      const [row] = await deps.storage.db
        .select({ policy: t.policy })
        .from(t)
        .where(eq(t.orgId, orgId))
        .limit(1);
      return inForce(row?.policy);
    },
    async set(orgId: string, policy: StoredPolicy): Promise<AuthenticationPolicy> {
      const updatedAt = new Date(deps.clock.now());
      await deps.storage.db
        .insert(t)
        .values({ orgId, policy, updatedAt })
        .onConflictDoUpdate({ target: t.orgId, set: { policy, updatedAt } });
      return inForce(policy);
    },
  } satisfies AuthenticationPolicies & Record<string, unknown>;
}

export type PolicyStore = ReturnType<typeof createPolicyStore>;
