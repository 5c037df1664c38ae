/**
 * The algorithms DPoP proofs (RFC 9449) may be signed with, here and at resource servers: the
 * discovery documents' `dpop_signing_alg_values_supported`. Ed25519 is EdDSA's fully-specified name
 * (RFC 9864), which current clients (oauth4webapi, openid-client) sign Ed25519 keys' proofs with. A
 * constant with no imports, so the identity-service/resource entry can take it anywhere.
 */
export const DPOP_SIGNING_ALGORITHMS: readonly string[] = [
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'RS256',
  'EdDSA',
  'Ed25519',
];
