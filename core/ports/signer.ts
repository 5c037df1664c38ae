import type { JWTPayload } from 'jose';

/** A public verification key as published in a JWKS. */
export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  alg: 'ES256';
  use: 'sig';
  key_ops: ['verify'];
  kid: string;
  x: string;
  y: string;
}

/**
 * A public key in the one member order it is served in. JSON keeps members in insertion order, and a
 * key read back from jsonb has them in jsonb's order: every replica must serve the same bytes (and so
 * the same ETag) for the same keys.
 */
export const publicJwkOf = (k: Pick<PublicJwk, 'kid' | 'x' | 'y'>): PublicJwk => ({
  kty: 'EC',
  crv: 'P-256',
  alg: 'ES256',
  use: 'sig',
  key_ops: ['verify'],
  kid: k.kid,
  x: k.x,
  y: k.y,
});

export interface Jwks {
  keys: PublicJwk[];
}

export interface SignOptions {
  /** JOSE `typ` header. @default 'JWT' */
  typ?: string;
  /**
   * A hint: compute the signature off the event loop's thread where the adapter can (WebCrypto, on a
   * thread of the runtime's pool). The thread is then free for other requests meanwhile, which suits a
   * caller that does little else (the token endpoint's client_credentials grant, webhook deliveries);
   * the answer comes a thread hop later, so concurrent callers that write next no longer arrive together
   * and batch less (tokens minted on PGlite: 14 % fewer a second). An adapter that signs elsewhere
   * anyway ignores it.
   * @default false
   */
  offThread?: boolean;
}

/**
 * The Signer port: ES256 per organization. The JWKS carries the current key and, for a grace period
 * after a rotation, the previous ones, so tokens signed just before a rotation still verify.
 */
export interface Signer {
  /** Signs the claims with the organization's current key (created on first use); header carries `kid`. */
  sign(orgId: string, claims: JWTPayload, options?: SignOptions): Promise<string>;
  /**
   * Signs as `sign` does, at once, when the organization's current key is at hand (loaded and fresh);
   * undefined when it is not, and then `sign` is the way: for a plugin that must not wait for a promise
   * (the service's own callers use `sign`). An adapter that never holds keys locally (a KMS) leaves it out.
   */
  signNow?(orgId: string, claims: JWTPayload, options?: SignOptions): string | undefined;
  jwks(orgId: string): Promise<Jwks>;
  /** Makes a new current key; the previous one stays in the JWKS for the grace period. */
  rotate(orgId: string): Promise<{ kid: string }>;
  /** Verifies a compact JWS against the organization's JWKS; throws jose errors on failure. */
  verify(orgId: string, jwt: string): Promise<JWTPayload>;
}
