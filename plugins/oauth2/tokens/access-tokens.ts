import { decodeProtectedHeader, type JWTPayload } from 'jose';
import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import type {
  AccessTokenClaims,
  AccessTokenRequest,
  SignedAccessToken,
} from '../../../core/capabilities/oauth2-server.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Signer, SignOptions } from '../../../core/ports/signer.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import { organizationAudience } from '../../../core/tokens/audience.ts';
import { isIssuerOf } from '../../../core/tokens/issuers.ts';
import { TOKEN_KEYS_OWNER } from '../../../core/tokens/token-keys.ts';
import type { ClientCache, LifetimeDefaults } from '../clients/cache.ts';
import type { ClientStore } from '../store/clients.ts';

/** The JOSE typ of RFC 9068 access tokens; identity tokens (typ JWT) are never taken for one. */
const AT_JWT = 'at+jwt';

/** A key ID looked up afresh at most this often: a flood of made-up kids costs no key reload each. */
const UNKNOWN_KID_RELOAD_MS = 5_000;

const isClaims = (c: Record<string, unknown>): c is Record<string, unknown> & AccessTokenClaims =>
  typeof c.sub === 'string' &&
  typeof c.client_id === 'string' &&
  typeof c.oid === 'string' &&
  typeof c.aud === 'string' &&
  typeof c.scope === 'string' &&
  typeof c.jti === 'string' &&
  typeof c.iat === 'number' &&
  typeof c.exp === 'number';

/**
 * RFC 9068 access tokens: ES256 JWTs with typ at+jwt, signed by the deployment's token keys (the ones in
 * /.well-known/jwks.json), and their verification and revocation. Their audience is the resource the
 * client asked for (RFC 8707), else their organization's own: never one shared by every tenant.
 */
export function createAccessTokens(deps: {
  signer: Signer;
  issuer: string;
  clock: Clock;
  store: ClientStore;
  clients: ClientCache;
  defaults: LifetimeDefaults;
}) {
  const { signer, issuer, clock, store, clients, defaults } = deps;
  const revoked = createBatchLoader(async (jtis) => {
    const found = await store.findRevoked(jtis);
    return new Map([...found].map((jti) => [jti, true]));
  });
  let lastUnknownReload = Number.NEGATIVE_INFINITY;

  async function published(kid: string): Promise<boolean> {
    if ((await signer.jwks(TOKEN_KEYS_OWNER)).keys.some((k) => k.kid === kid)) return true;
    // Another replica may have rotated since the keys were cached: look once in a while, not per token.
    if (clock.now() - lastUnknownReload < UNKNOWN_KID_RELOAD_MS) return false;
    lastUnknownReload = clock.now();
    return true;
  }

  /** The claims of a new token, as the signer takes them (no copy needed: it keeps no reference). */
  function claimsOf(request: AccessTokenRequest): AccessTokenClaims & JWTPayload {
    const { client } = request;
    const iat = Math.floor(clock.now() / 1000);
    const claims: AccessTokenClaims & JWTPayload = {
      ...request.claims,
      // The client's issuer: the deployment's, or its organization's own (core/tokens/issuers.ts).
      iss: client.issuer,
      sub: request.subject,
      aud: request.resource ?? organizationAudience(issuer, client.orgId),
      client_id: client.clientId,
      oid: client.orgId,
      scope: request.scope.join(' '),
      jti: crypto.randomUUID(),
      iat,
      exp: Math.min(
        iat + (client.accessTokenLifetime ?? defaults.accessTokenSeconds),
        request.notAfter ?? Number.POSITIVE_INFINITY,
      ),
    };
    if (request.authTime !== undefined) claims.auth_time = request.authTime;
    // Only the server binds a token to a key: never a claim a caller or a hook passed.
    if (request.dpopJkt !== undefined) claims.cnf = { jkt: request.dpopJkt };
    else delete claims.cnf;
    return claims;
  }
  const signed = (token: string, claims: AccessTokenClaims): SignedAccessToken => ({
    token,
    expiresIn: claims.exp - claims.iat,
    claims,
  });

  return {
    /** Signs the access token (the client_credentials grant asks for `offThread`). */
    async sign(
      request: AccessTokenRequest,
      options?: Pick<SignOptions, 'offThread'>,
    ): Promise<SignedAccessToken> {
      const claims = claimsOf(request);
      return signed(await signer.sign(TOKEN_KEYS_OWNER, claims, { typ: AT_JWT, ...options }), claims);
    },

    /** The claims of an active access token, or undefined (malformed, forged, expired, revoked, client gone). */
    async verify(token: string): Promise<AccessTokenClaims | undefined> {
      let kid: unknown;
      try {
        const header = decodeProtectedHeader(token);
        const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
        if (header.alg !== 'ES256' || (typ !== AT_JWT && typ !== `application/${AT_JWT}`)) return undefined;
        kid = header.kid;
      } catch {
        return undefined;
      }
      if (typeof kid !== 'string' || !(await published(kid))) return undefined;
      let claims: Record<string, unknown>;
      try {
        claims = await signer.verify(TOKEN_KEYS_OWNER, token);
      } catch {
        return undefined;
      }
      if (!isClaims(claims) || !isIssuerOf(claims.iss, issuer, claims.oid)) return undefined;
      if (claims.exp * 1000 <= clock.now()) return undefined;
      const known = await clients.get(claims.client_id);
      if (known === null || known.client.orgId !== claims.oid) return undefined;
      if (await revoked.load(claims.jti)) return undefined;
      return claims;
    },

    /** Revokes the tokens until they expire, in `tx` when given. */
    revoke(
      tokens: readonly Pick<AccessTokenClaims, 'oid' | 'jti' | 'exp' | 'client_id'>[],
      tx?: Transaction,
    ): Promise<void> {
      return store.revoke(
        tokens.map((claims) => ({
          jti: claims.jti,
          orgId: claims.oid,
          clientId: claims.client_id,
          exp: claims.exp,
        })),
        tx,
      );
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
