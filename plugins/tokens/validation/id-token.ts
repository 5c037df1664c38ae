import { decodeProtectedHeader, errors, type JWTPayload } from 'jose';
import type { VerifiedIdToken } from '../../../core/capabilities/token-issuer.ts';
import { isIssuerOf } from '../../../core/tokens/issuers.ts';
import type { TokenKeys } from '../issue/keys.ts';

/** Longer than any ID token this service signs: a bigger hint is no ID token of ours. */
const MAX_LENGTH = 16_384;

/** The payload of a token these keys signed, expired or not; undefined when the signature fails. */
async function signedPayload(keys: TokenKeys, token: string): Promise<JWTPayload | undefined> {
  try {
    return await keys.verify(token);
  } catch (error) {
    // jose checks the signature before the claims: an expired token's error carries authentic claims.
    return error instanceof errors.JWTExpired ? error.payload : undefined;
  }
}

/**
 * `verifyIdToken` of the tokenIssuer capability: an ID token of this deployment, expired or not (an
 * `id_token_hint` at logout). Identity tokens share the keys, the issuer and typ JWT: their `aud` is
 * their organization (or absent, for old ones), an ID token's is its client. Access tokens (typ at+jwt)
 * and logout tokens (typ logout+jwt) are told apart by their typ.
 */
export function createIdTokenVerifier(deps: { keys: TokenKeys; issuer: string }) {
  return async function verifyIdToken(token: string): Promise<VerifiedIdToken | undefined> {
    if (token.length > MAX_LENGTH || token.split('.').length !== 3) return undefined;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'ES256' || typeof header.kid !== 'string') return undefined;
      if (header.typ !== undefined && String(header.typ).toLowerCase() !== 'jwt') return undefined;
    } catch {
      return undefined;
    }
    const claims = await signedPayload(deps.keys, token);
    if (!claims) return undefined;
    const { aud, oid, sub, sid, iat, exp } = claims;
    if (typeof oid !== 'string' || typeof sub !== 'string' || typeof aud !== 'string' || aud === oid)
      return undefined;
    // The deployment's issuer, or the organization's own for a client bound to it.
    if (!isIssuerOf(claims.iss, deps.issuer, oid)) return undefined;
    if (typeof iat !== 'number' || typeof exp !== 'number') return undefined;
    return {
      orgId: oid,
      clientId: aud,
      personId: sub,
      ...(typeof sid === 'string' ? { sessionId: sid } : {}),
      issuedAt: iat,
      expiresAt: exp,
    };
  };
}
