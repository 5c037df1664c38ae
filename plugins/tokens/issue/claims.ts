// One list for the issuer, mint-token and the token_minted hook: core/tokens/reserved-claims.ts.
export { REGISTERED_CLAIMS, reservedClaims } from '../../../core/tokens/reserved-claims.ts';

/** The first claim of `claims` that may not be set by a caller or a hook, if any. */
export function forbiddenClaim(
  claims: Readonly<Record<string, unknown>>,
  reserved: ReadonlySet<string>,
  groupsClaim: string,
): string | undefined {
  for (const name of Object.keys(claims)) if (reserved.has(name) || name === groupsClaim) return name;
  return undefined;
}
