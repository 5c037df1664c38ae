import { type SignInCompletion, signInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import { tokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import {
  type AuthenticationPolicy,
  authenticationPolicies,
  defaultPolicy,
} from '../../../core/factors/policy.ts';
import { definePlugin } from '../../../core/plugin.ts';

/**
 * What the factors plugin provides, in a few lines, until it lands: a policy per organization the test
 * sets (`policies`), and a completion that issues the token through the real tokenIssuer, or, for the
 * persons in `secondStep`, answers mfa_required with a token `pending` knows (single use is the factors
 * plugin's; not kept here).
 */
export function factorsStandIn(publicBaseUrl: string) {
  const policies = new Map<string, AuthenticationPolicy>();
  const secondStep = new Map<string, SecondFactor[]>();
  const pending = new Map<string, { orgId: string; personId: string; methods: SecondFactor[] }>();
  const plugin = definePlugin({
    id: 'factors-stand-in',
    requires: { issuer: tokenIssuer },
    provides: { authenticationPolicies, signInCompletion },
    setup: (_ctx, { issuer }) => {
      const policyOf = (orgId: string) => policies.get(orgId) ?? defaultPolicy(publicBaseUrl);
      const completion: SignInCompletion = {
        allows: async (orgId, method) => policyOf(orgId).firstFactors.some((f) => f === method),
        secondStep: async (_orgId, personId) => secondStep.get(personId) ?? [],
        async afterFirstFactor({ orgId, person, authentication, rc }) {
          const methods = secondStep.get(person.personId) ?? [];
          if (methods.length) {
            const mfaToken = crypto.randomUUID();
            pending.set(mfaToken, { orgId, personId: person.personId, methods });
            return { kind: 'mfa_required', person_id: person.personId, mfa_token: mfaToken, methods };
          }
          const issued = await issuer.issue({
            orgId,
            personId: person.personId,
            methods: [authentication.method],
            issuer: 'authentication',
            authentications: [authentication],
            request: rc.analytics,
          });
          return { kind: 'token', token: issued.token, person_id: person.personId };
        },
        async pending(orgId, mfaToken) {
          const p = pending.get(mfaToken);
          return p && p.orgId === orgId ? { personId: p.personId, methods: p.methods } : undefined;
        },
      };
      return {
        provide: {
          authenticationPolicies: { get: async (orgId) => policyOf(orgId) },
          signInCompletion: completion,
        },
      };
    },
  });
  return {
    plugin,
    policies,
    secondStep,
    policyOf: (orgId: string) => policies.get(orgId) ?? defaultPolicy(publicBaseUrl),
  };
}
