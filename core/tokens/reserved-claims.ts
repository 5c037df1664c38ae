/** The JWT registered claims (RFC 7519) the service always sets itself. */
export const REGISTERED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
]);

/**
 * Claims the service reserves in identity tokens: the reference's list (mint-token's "reserved and
 * cannot be specified"), with this product's names in place of the vendor's name and domains. The
 * organization's groups claim (groups_claim_name) is reserved too: see `reservedClaimOf`.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'prev_token_id',
  'oid',
  'org_id',
  'user_id',
  'person_id',
  'first_token',
  'authenticated_methods',
  'oidc_tokens',
  'user_token',
  'groups',
  'roles',
  'access_token',
  'refresh_token',
  'id',
  'id_token',
  'gdpr',
  'gdpr_consent',
  'gdpr_consent_level',
  'parent_user_id',
  'parent_person_id',
  'parent_org_id',
  'parent_oid',
  'attributes',
  'custom_claims',
  'identity_service',
  'identity-service',
  'sid',
]);

/**
 * The first member of `claims` that a caller may not set, with why: a registered claim, a reserved
 * one, or the organization's groups claim. Undefined when every member is a custom claim.
 *
 * @example
 * reservedClaimOf({ plan: 'pro', oid: 'x' }, 'groups') // { claim: 'oid', kind: 'reserved' }
 */
export function reservedClaimOf(
  claims: Readonly<Record<string, unknown>>,
  groupsClaimName = 'groups',
): { claim: string; kind: 'registered' | 'reserved' } | undefined {
  for (const claim of Object.keys(claims)) {
    if (REGISTERED_CLAIMS.has(claim)) return { claim, kind: 'registered' };
    if (RESERVED_CLAIMS.has(claim) || claim === groupsClaimName) return { claim, kind: 'reserved' };
  }
  return undefined;
}
