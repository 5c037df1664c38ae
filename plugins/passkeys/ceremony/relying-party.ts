import {
  type AuthenticationPolicy,
  authenticationPolicies,
  defaultPolicy,
} from '../../../core/factors/policy.ts';
import type { ServiceContext } from '../../../core/plugin.ts';

/** The relying party an organization's passkeys belong to, and the origins whose ceremonies count. */
export type RelyingParty = AuthenticationPolicy['webauthn'];

/**
 * Reads the organization's policy at each ceremony (a change takes effect at once): its `webauthn`
 * member when a plugin provides `authenticationPolicies`, else the default policy's, from
 * PUBLIC_BASE_URL (its host the RP ID, its origin the only origin).
 */
export function relyingParties(ctx: ServiceContext) {
  const fallback = defaultPolicy(ctx.config.publicBaseUrl);
  return {
    async of(orgId: string): Promise<RelyingParty> {
      const policies = ctx.capability(authenticationPolicies);
      return policies ? (await policies.get(orgId)).webauthn : fallback.webauthn;
    },
    /** Whether the policy allows passkeys as a first factor (every factor without a policy plugin). */
    async allowsFirstFactor(orgId: string): Promise<boolean> {
      const policies = ctx.capability(authenticationPolicies);
      return policies ? (await policies.get(orgId)).firstFactors.includes('webauthn') : true;
    },
  };
}

export type RelyingParties = ReturnType<typeof relyingParties>;
