/**
 * The checks of a DPoP proof (RFC 9449 §4.3) that every side makes: the authorization server at its
 * token and userinfo endpoints, and a resource server through identity-service/resource. Web APIs and
 * jose only, as resource.ts is: it ships with that entry. Remembering `jti`s and checking nonces are
 * each side's own (a database on the server, memory in a resource server).
 */
import { base64url, calculateJwkThumbprint, EmbeddedJWK, type JWTPayload, jwtVerify } from 'jose';
import { DPOP_SIGNING_ALGORITHMS } from '../../../core/tokens/dpop-algorithms.ts';

/** The proof algorithms taken (the metadata's `dpop_signing_alg_values_supported`). */
export const DPOP_ALGORITHMS = [...DPOP_SIGNING_ALGORITHMS];

/**
 * Why a proof was refused: `use_dpop_nonce` when it lacks the server's current nonce (RFC 9449 §8),
 * which `nonce` then carries for the DPoP-Nonce header.
 */
export class DPoPProofError extends Error {
  readonly nonce: string | undefined;
  constructor(
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    message: string,
    options?: { cause?: unknown; nonce?: string },
  ) {
    super(message, options);
    this.name = 'DPoPProofError';
    this.nonce = options?.nonce;
  }
}

/** A proof that passed the checks. */
export interface CheckedProof {
  /** The JWK SHA-256 thumbprint of its key (RFC 7638): a bound token's `cnf.jkt`. */
  jkt: string;
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
  nonce: string | undefined;
}

/** The URL a proof's `htu` names: the request's without query and fragment (RFC 9449 §4.3). */
export const htuOf = (url: string) => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
};

/** BASE64URL(SHA-256(token)): a proof's `ath` for an access token (RFC 9449 §4.2). */
export async function accessTokenHash(token: string): Promise<string> {
  return base64url.encode(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))),
  );
}

/** The one DPoP header of a request, undefined when there is none; two or more are refused (§4.3). */
export function proofHeaderOf(headers: Headers): string | undefined {
  const value = headers.get('dpop');
  if (value === null) return undefined;
  if (value.includes(',') || value.trim() === '')
    throw new DPoPProofError('invalid_dpop_proof', 'the request must carry exactly one DPoP proof header');
  return value.trim();
}

/**
 * Checks a proof for one request: a dpop+jwt signed by the public key in its header with one of
 * DPOP_ALGORITHMS, `htm` the method, `htu` the URL (without query), `iat` within `toleranceSeconds` of
 * now, a `jti`, and with `accessToken` its `ath`, with `jkt` its key's thumbprint. Throws DPoPProofError.
 */
export async function checkProof(
  proof: string,
  o: {
    method: string;
    htu: string;
    /** Milliseconds since the epoch. */
    now: number;
    toleranceSeconds: number;
    accessToken?: string;
    jkt?: string;
  },
): Promise<CheckedProof> {
  const bad = (message: string, cause?: unknown) =>
    new DPoPProofError('invalid_dpop_proof', message, cause === undefined ? undefined : { cause });
  let payload: JWTPayload;
  let jwk: JsonWebKey | undefined;
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk;
  } catch (cause) {
    throw bad(
      `the DPoP proof is not a dpop+jwt signed by the public key in its header (alg one of ${DPOP_ALGORITHMS.join(', ')})`,
      cause,
    );
  }
  if (!jwk || 'd' in jwk) throw bad("the DPoP proof's header must carry a public key (jwk)");
  if (payload.htm !== o.method)
    throw bad(`the DPoP proof is for the method ${String(payload.htm)}, not ${o.method} (htm)`);
  if (payload.htu !== o.htu) throw bad(`the DPoP proof is for another URL (htu must be ${o.htu})`);
  const nowS = Math.floor(o.now / 1000);
  if (typeof payload.iat !== 'number' || Math.abs(nowS - payload.iat) > o.toleranceSeconds)
    throw bad(`the DPoP proof's iat must be within ${o.toleranceSeconds} seconds of now`);
  if (typeof payload.jti !== 'string' || payload.jti.length === 0 || payload.jti.length > 256)
    throw bad('the DPoP proof needs a jti of 1 to 256 characters');
  if (o.accessToken !== undefined && payload.ath !== (await accessTokenHash(o.accessToken)))
    throw bad("the DPoP proof's ath is not the hash of this access token");
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  if (o.jkt !== undefined && jkt !== o.jkt)
    throw bad("the DPoP proof's key is not the one the token is bound to (cnf.jkt)");
  return {
    jkt,
    jti: payload.jti,
    iat: payload.iat,
    nonce: typeof payload.nonce === 'string' ? payload.nonce : undefined,
  };
}
