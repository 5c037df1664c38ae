/** JWT registered claims (RFC 7519 section 4.1): the issuer sets them, nobody else. */
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
 * The reference's reserved claims, with this product's names in place of the vendor's: custom claims
 * (mint-token's, and those a token_minted hook returns) may not set them.
 */
const RESERVED = [
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
];

/**
 * The claims custom claims may not set: registered, reserved, the deployment's header prefix in lower
 * case (its product name, `service` by default) and the organization's groups claim name.
 */
export function reservedClaims(headerPrefix: string): ReadonlySet<string> {
  return new Set([...REGISTERED_CLAIMS, ...RESERVED, headerPrefix.toLowerCase()]);
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
