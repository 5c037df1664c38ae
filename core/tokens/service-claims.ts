import { defineHook, type Hooks } from '../contract/hooks.ts';
import type { JsonValue } from '../ports/event-bus.ts';

/**
 * The reserved claims that service plugins fill in identity tokens: the roles plugin's `roles` and the
 * consents plugin's `gdpr_consent_level`. They are reserved (RESERVED_CLAIMS), so neither custom claims
 * nor the `token_minted` hook may set them; only a handler of `serviceTokenClaims` may, and only these.
 */
export const SERVICE_CLAIMS = ['roles', 'gdpr_consent_level'] as const;
export type ServiceClaimName = (typeof SERVICE_CLAIMS)[number];

/** The token being issued, as a service plugin needs to know it. */
export interface ServiceClaimsRequest {
  readonly orgId: string;
  readonly personId: string;
  /** What issues it: a factor's sign-in, an anonymous person's token, the OAuth server, mint-token. */
  readonly issuer: 'authentication' | 'anonymous' | 'oauth2' | 'mint' | (string & {});
}

/** A handler's answer: values for service claims (a claim left out is not set). */
export type ServiceClaims = Partial<Record<ServiceClaimName, JsonValue>>;

/**
 * Called by the token issuer for every token it signs (mint-token included), before `beforeTokenIssued`,
 * so that the `token_minted` hook sees the claims as they will be signed. Unlike `beforeTokenIssued`, its
 * handlers may set the service claims listed in SERVICE_CLAIMS and nothing else.
 *
 * @example
 * attach: [serviceTokenClaims.attach({ run: async ({ orgId, personId }) => ({ roles: await rolesOf(orgId, personId) }) })]
 */
export const serviceTokenClaims = defineHook<ServiceClaimsRequest, ServiceClaims | undefined>(
  'serviceTokenClaims',
);

const isServiceClaim = (name: string): name is ServiceClaimName =>
  (SERVICE_CLAIMS as readonly string[]).includes(name);

/**
 * Runs `serviceTokenClaims` and merges the handlers' claims. A claim outside SERVICE_CLAIMS, or one two
 * handlers both set, is a plugin's bug (the types forbid the first): it fails the issuance rather than
 * sign a token whose claims nobody owns.
 */
export async function collectServiceClaims(
  hooks: Hooks,
  request: ServiceClaimsRequest,
): Promise<Record<string, JsonValue>> {
  if (!hooks.has(serviceTokenClaims)) return {};
  const merged: Record<string, JsonValue> = {};
  for (const result of await hooks.run(serviceTokenClaims, request))
    for (const [name, value] of Object.entries(result ?? {})) {
      if (value === undefined) continue;
      if (!isServiceClaim(name))
        throw new Error(`serviceTokenClaims: ${name} is not a service claim (${SERVICE_CLAIMS.join(', ')})`);
      if (name in merged) throw new Error(`serviceTokenClaims: two handlers set the claim ${name}`);
      merged[name] = value;
    }
  return merged;
}
