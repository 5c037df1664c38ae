/**
 * Trusting this service's access tokens in an API of your own (a resource server, an MCP server among
 * them): the checks of RFC 9068 in one call (signature with the service's published keys, `typ`
 * at+jwt, issuer, audience, organization, expiry, scopes), the DPoP binding of RFC 9449 when the token
 * carries `cnf.jkt`, and the protected resource metadata of RFC 9728 that tells clients where to get a
 * token. Web APIs and jose only: it runs on Bun, Node, Deno and edge runtimes, as TypeScript source.
 *
 * @example
 * import { createResourceVerifier, ResourceVerificationError } from 'identity-service/resource';
 *
 * const api = createResourceVerifier({
 *   issuer: 'https://ids.example.com',
 *   orgId: '<your org id>',
 *   resource: 'https://api.example.com/mcp', // a resource your clients list; omit for the organization's own
 * });
 * Bun.serve({
 *   async fetch(request) {
 *     if (new URL(request.url).pathname === '/.well-known/oauth-protected-resource') return api.metadataResponse();
 *     try {
 *       const { claims } = await api.verify(request, { scopes: ['read'] });
 *       return Response.json({ hello: claims.sub });
 *     } catch (e) {
 *       if (e instanceof ResourceVerificationError) return api.refusal(e);
 *       throw e;
 *     }
 *   },
 * });
 */
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify, type RemoteJWKSetOptions } from 'jose';
import {
  type CheckedProof,
  checkProof,
  DPOP_ALGORITHMS,
  DPoPProofError,
  htuOf,
  proofHeaderOf,
} from './dpop/proof.ts';

export type ResourceVerificationCode =
  /** No token, or not `Bearer` / `DPoP` with one token (RFC 6750 §3.1 invalid_request). */
  | 'ERR_RESOURCE_NO_TOKEN'
  /** Not a valid access token of this issuer for this resource and organization (invalid_token). */
  | 'ERR_RESOURCE_INVALID_TOKEN'
  /** The token's keys could not be fetched: retry later (a 503, not the client's fault). */
  | 'ERR_RESOURCE_KEYS_UNAVAILABLE'
  /** A scope the call needs was not granted (insufficient_scope). */
  | 'ERR_RESOURCE_SCOPE'
  /** A DPoP-bound token without a valid proof for this request, or a proof replayed (invalid_dpop_proof). */
  | 'ERR_RESOURCE_DPOP';

/** A request refused; `code` says why, stable across versions, `message` says what was wrong. */
export class ResourceVerificationError extends Error {
  constructor(
    readonly code: ResourceVerificationCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ResourceVerificationError';
  }
}

/** The claims of one of this service's access tokens (RFC 9068). */
export interface AccessTokenClaims extends JWTPayload {
  iss: string;
  /** The person, or the client itself for client_credentials. */
  sub: string;
  aud: string;
  client_id: string;
  /** The organization. */
  oid: string;
  /** Space-delimited. */
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  /** The DPoP key the token is bound to (RFC 9449 §6): its JWK SHA-256 thumbprint. */
  cnf?: { jkt?: string };
}

export interface ResourceVerifierOptions {
  /**
   * The issuer this API names in its metadata (`authorization_servers`): the service's PUBLIC_BASE_URL,
   * or the organization's own issuer, `{PUBLIC_BASE_URL}/oauth2/organizations/{orgId}` (what clients
   * that register themselves, such as MCP clients, discover). Tokens of either issuer of the
   * organization are taken; the keys are the service's, at `{PUBLIC_BASE_URL}/.well-known/jwks.json`.
   */
  issuer: string;
  /** The organization whose tokens this API takes: another organization's are refused. */
  orgId: string;
  /**
   * This API's resource indicator (RFC 8707), exactly as clients ask for it and list it in their
   * `resources`. Omitted: the organization's own audience, `{PUBLIC_BASE_URL}/organizations/{orgId}`.
   */
  resource?: string;
  /** Scopes this API knows, for the metadata's `scopes_supported`. */
  scopesSupported?: string[];
  /** Seconds of clock difference allowed for `exp` and a DPoP proof's `iat`. @default 60 */
  clockToleranceSeconds?: number;
  /** Options of jose's remote key set (cache age, cooldown, timeout). */
  jwks?: Pick<RemoteJWKSetOptions, 'cacheMaxAge' | 'cooldownDuration' | 'timeoutDuration'>;
  /** The time, for tests. @default Date.now */
  now?: () => number;
}

const AT_JWT = /^(application\/)?at\+jwt$/i;

/** The token and how it was presented, from the Authorization header. */
function presented(request: Request): { scheme: 'bearer' | 'dpop'; token: string } {
  const header = request.headers.get('authorization') ?? '';
  const match = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  if (!match)
    throw new ResourceVerificationError(
      'ERR_RESOURCE_NO_TOKEN',
      'an access token is required as Authorization: Bearer <token> (or DPoP <token> for a DPoP-bound one)',
    );
  return { scheme: match[1]!.toLowerCase() === 'dpop' ? 'dpop' : 'bearer', token: match[2]! };
}

/**
 * Makes a verifier for one resource of one organization. It fetches the service's key set once and
 * caches it; proofs' `jti` are remembered for their lifetime, so a replayed proof is refused.
 */
export function createResourceVerifier(options: ResourceVerifierOptions) {
  const issuer = options.issuer.replace(/\/+$/, '');
  // The organization's own issuer is the service's base URL with this path (core/tokens/issuers.ts).
  const ownPath = `/oauth2/organizations/${options.orgId}`;
  const base = issuer.endsWith(ownPath) ? issuer.slice(0, -ownPath.length) : issuer;
  const issuers = [base, `${base}${ownPath}`];
  const resource = options.resource ?? `${base}/organizations/${options.orgId}`;
  const tolerance = options.clockToleranceSeconds ?? 60;
  const now = options.now ?? Date.now;
  const keys = createRemoteJWKSet(new URL(`${base}/.well-known/jwks.json`), options.jwks);
  /** Proof `jti`s seen, with when they may be forgotten (ms). */
  const seenProofs = new Map<string, number>();

  const invalid = (message: string, cause?: unknown) =>
    new ResourceVerificationError('ERR_RESOURCE_INVALID_TOKEN', message, { cause });
  const badProof = (message: string, cause?: unknown) =>
    new ResourceVerificationError('ERR_RESOURCE_DPOP', message, { cause });

  async function checkRequestProof(request: Request, token: string, jkt: string): Promise<void> {
    let proof: CheckedProof;
    try {
      const header = proofHeaderOf(request.headers);
      if (header === undefined)
        throw new DPoPProofError(
          'invalid_dpop_proof',
          'a DPoP-bound token needs a DPoP proof header (RFC 9449 §7.1)',
        );
      proof = await checkProof(header, {
        method: request.method,
        htu: htuOf(request.url),
        now: now(),
        toleranceSeconds: tolerance,
        accessToken: token,
        jkt,
      });
    } catch (cause) {
      if (cause instanceof DPoPProofError) throw badProof(cause.message, cause);
      throw cause;
    }
    for (const [jti, until] of seenProofs) if (until < now()) seenProofs.delete(jti);
    if (seenProofs.has(proof.jti)) throw badProof('the DPoP proof was used before (its jti is replayed)');
    seenProofs.set(proof.jti, now() + 2 * tolerance * 1000);
  }

  return {
    /** The resource indicator tokens must carry in `aud`. */
    resource,

    /**
     * Verifies the request's access token: answers its claims, or throws ResourceVerificationError.
     * `scopes`: every one must have been granted.
     */
    async verify(request: Request, o: { scopes?: string[] } = {}): Promise<{ claims: AccessTokenClaims }> {
      const { scheme, token } = presented(request);
      let payload: JWTPayload;
      try {
        const verified = await jwtVerify(token, keys, {
          issuer: issuers,
          audience: resource,
          algorithms: ['ES256'],
          clockTolerance: tolerance,
          currentDate: new Date(now()),
        });
        if (!AT_JWT.test(String(verified.protectedHeader.typ ?? '')))
          throw invalid(
            'the token is not an access token (typ at+jwt): an ID or identity token is not for APIs',
          );
        payload = verified.payload;
      } catch (cause) {
        if (cause instanceof ResourceVerificationError) throw cause;
        if (
          cause instanceof errors.JWKSTimeout ||
          (cause instanceof errors.JOSEError && cause.code === 'ERR_JWKS_INVALID')
        )
          throw new ResourceVerificationError(
            'ERR_RESOURCE_KEYS_UNAVAILABLE',
            "the issuer's keys could not be fetched",
            { cause },
          );
        if (cause instanceof errors.JWTClaimValidationFailed)
          throw invalid(`the access token's ${cause.claim} is not valid here (${cause.reason})`, cause);
        if (cause instanceof errors.JWTExpired) throw invalid('the access token has expired', cause);
        throw invalid('the access token is not a valid token of this issuer', cause);
      }
      const claims = payload as AccessTokenClaims;
      if (claims.oid !== options.orgId) throw invalid("the access token is another organization's");
      const jkt = claims.cnf?.jkt;
      if (jkt) {
        if (scheme !== 'dpop')
          throw badProof('the access token is DPoP-bound: present it as Authorization: DPoP');
        await checkRequestProof(request, token, jkt);
      } else if (scheme === 'dpop')
        throw badProof('the access token is not DPoP-bound: present it as Bearer');
      const granted = new Set(String(claims.scope ?? '').split(' '));
      const missing = (o.scopes ?? []).filter((s) => !granted.has(s));
      if (missing.length)
        throw new ResourceVerificationError(
          'ERR_RESOURCE_SCOPE',
          `the scope ${missing.join(' ')} was not granted`,
        );
      return { claims };
    },

    /** The protected resource metadata (RFC 9728 §2). */
    metadata() {
      return {
        resource,
        authorization_servers: [issuer],
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
        ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
      };
    },

    /** The metadata as the answer of GET /.well-known/oauth-protected-resource. */
    metadataResponse(): Response {
      return Response.json(this.metadata(), {
        headers: { 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' },
      });
    },

    /**
     * The answer to a refused request: 401 (403 for a missing scope, 503 when the keys are unavailable)
     * with the WWW-Authenticate challenge of RFC 6750 §3 / RFC 9449 §7.1, naming the metadata (RFC 9728 §5.1).
     */
    refusal(e: ResourceVerificationError, metadataUrl?: string): Response {
      const error = {
        ERR_RESOURCE_NO_TOKEN: undefined,
        ERR_RESOURCE_INVALID_TOKEN: 'invalid_token',
        ERR_RESOURCE_KEYS_UNAVAILABLE: undefined,
        ERR_RESOURCE_SCOPE: 'insufficient_scope',
        ERR_RESOURCE_DPOP: 'invalid_dpop_proof',
      }[e.code];
      const status =
        e.code === 'ERR_RESOURCE_SCOPE' ? 403 : e.code === 'ERR_RESOURCE_KEYS_UNAVAILABLE' ? 503 : 401;
      const scheme = e.code === 'ERR_RESOURCE_DPOP' ? 'DPoP' : 'Bearer';
      const params = [
        ...(metadataUrl ? [`resource_metadata="${metadataUrl}"`] : []),
        ...(error ? [`error="${error}"`, `error_description="${e.message.replaceAll('"', "'")}"`] : []),
        ...(scheme === 'DPoP' ? [`algs="${DPOP_ALGORITHMS.join(' ')}"`] : []),
      ];
      return Response.json(
        { error: error ?? 'invalid_request', error_description: e.message },
        {
          status,
          headers: { 'www-authenticate': `${scheme}${params.length ? ` ${params.join(', ')}` : ''}` },
        },
      );
    },
  };
}

export type ResourceVerifier = ReturnType<typeof createResourceVerifier>;
