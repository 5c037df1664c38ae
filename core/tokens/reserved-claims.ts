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
 * The claims an ID token carries beyond an identity token's (OpenID Connect Core §2): the issuer sets
 * them from the authentication request, so neither a caller nor a hook may.
 */
export const ID_TOKEN_CLAIMS: ReadonlySet<string> = new Set([
  'azp',
  'nonce',
  'auth_time',
  'at_hash',
  'c_hash',
  'acr',
  'amr',
  'sid',
]);

/**
 * The claims of an RFC 9068 access token beyond the registered ones (§2.2): the server sets them from the
 * grant, so a caller's custom claims may not (a `scope` of their own would widen the grant). Also the
 * members introspection (RFC 7662 §2.2) answers as the server's own statement about the token, `active`
 * and `token_type`, which a claim of the same name would otherwise seem to contradict. And RFC 8693's
 * `act` and `may_act`: who acts for the subject is the token exchange's to say, never a caller's.
 */
export const ACCESS_TOKEN_CLAIMS: ReadonlySet<string> = new Set([
  'client_id',
  'scope',
  'auth_time',
  'acr',
  'amr',
  'active',
  'token_type',
  'act',
  'may_act',
]);

/** The claim that carries a person's groups until the organization names another. */
export const DEFAULT_GROUPS_CLAIM = 'groups';

/**
 * Whether an organization may carry its persons' groups under `name`: never under a claim the service
 * sets or reserves (registered, reserved, an ID token's, the deployment's header prefix in lower case),
 * which the groups would replace in every token; `groups`, the default, is reserved for exactly this.
 *
 * @example
 * isFreeGroupsClaimName('sid', 'Service') // false
 */
export function isFreeGroupsClaimName(name: string, headerPrefix: string): boolean {
  if (name === DEFAULT_GROUPS_CLAIM) return true;
  return !(reservedClaims(headerPrefix).has(name) || ID_TOKEN_CLAIMS.has(name));
}

/**
 * The claims custom claims may not set: registered, reserved, the deployment's header prefix in lower
 * case (its product name, `service` by default) and the organization's groups claim name.
 */
export function reservedClaims(headerPrefix: string): ReadonlySet<string> {
  return new Set([...REGISTERED_CLAIMS, ...RESERVED_CLAIMS, headerPrefix.toLowerCase()]);
}

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
