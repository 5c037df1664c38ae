import type { AuthenticationPolicies } from '../../../core/factors/policy.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';

/**
 * Methods of tokens no sign-in issued, which the policy does not judge: a token the organization minted
 * itself (POST /persons/{id}/mint-token) and an anonymous person's.
 */
const NOT_SIGN_INS = new Set(['api', 'anonymous']);

/**
 * Whether the organization's current policy would not have issued this token: it requires a second
 * factor and the token's authenticated_methods name fewer than two distinct factors (a password-only
 * token from before the policy changed, say). The reference's `not_enough_factors`.
 */
export async function lacksFactors(
  policies: AuthenticationPolicies,
  orgId: string,
  claims: Readonly<Record<string, JsonValue>>,
): Promise<boolean> {
  const listed = Array.isArray(claims.authenticated_methods) ? claims.authenticated_methods : [];
  const methods = new Set(listed.filter((m): m is string => typeof m === 'string'));
  if ([...methods].some((m) => NOT_SIGN_INS.has(m))) return false;
  if (methods.size >= 2) return false;
  return (await policies.get(orgId)).secondFactor === 'required';
}
