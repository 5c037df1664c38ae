import { REGISTERED_CLAIMS, RESERVED_CLAIMS } from '../../core/tokens/reserved-claims.ts';

// One list for the issuer, mint-token and the token_minted hook: core/tokens/reserved-claims.ts.
export { REGISTERED_CLAIMS };

/**
 * The claims custom claims may not set: registered, reserved, the deployment's header prefix in lower
 * case (its product name, `service` by default) and the organization's groups claim name.
 */
export function reservedClaims(headerPrefix: string): ReadonlySet<string> {
  return new Set([...REGISTERED_CLAIMS, ...RESERVED_CLAIMS, headerPrefix.toLowerCase()]);
}

/** The first claim of `claims` that may not be set by a caller or a hook, if any. */
export function forbiddenClaim(
  claims: Readonly<Record<string, unknown>>,
  reserved: ReadonlySet<string>,
  groupsClaim: string,
): string | undefined {
  for (const name of Object.keys(claims)) if (reserved.has(name) || name === groupsClaim) return name;
  return undefined;
}
