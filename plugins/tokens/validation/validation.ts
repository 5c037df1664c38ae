import { and, eq, lt, sql } from 'drizzle-orm';
import { decodeProtectedHeader } from 'jose';
import type { InvalidReason } from '../../../core/capabilities/token-issuer.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { isIssuerOf } from '../../../core/tokens/issuers.ts';
import type { TokenKeys } from '../issue/keys.ts';
import { tokensRevoked } from '../schema.ts';
import { issuedAtMs } from './person-revocation.ts';

export type Validation =
  | { valid: true; claims: Record<string, JsonValue> }
  | { valid: false; reason: InvalidReason };

const JOSE_REASONS: Record<string, InvalidReason> = {
  ERR_JWT_EXPIRED: 'expired',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'bad_signature',
  ERR_JWKS_NO_MATCHING_KEY: 'unknown_key',
};

/** A key ID looked up afresh at most this often: a flood of made-up kids costs no key reload each. */
const UNKNOWN_KID_RELOAD_MS = 5_000;

export interface ValidatorDeps {
  storage: Storage;
  clock: Clock;
  keys: TokenKeys;
  issuer: string;
}

/**
 * Whether verified claims are an identity token's rather than an OpenID Connect ID token's, which share
 * the keys, the issuer and typ JWT: an identity token is for its organization (aud is the organization
 * ID), an ID token for a client (aud is the client ID, never an organization's). Tokens issued before
 * identity tokens carried aud have none; every ID token always had one. So anything else these keys
 * ever sign must have a typ other than JWT (access tokens: at+jwt) or an aud that is no organization.
 */
const isIdentityAudience = (claims: Record<string, JsonValue>): boolean =>
  claims.aud === undefined || claims.aud === claims.oid;

/**
 * Validation and revocation of identity tokens. A token is valid when it is a compact ES256 JWS signed
 * by one of the deployment's published token keys, typ JWT, unexpired, of this deployment's issuer,
 * an identity token (aud its organization: not an ID token, whose aud is a client), of the organization
 * asking (when one asks), and not revoked.
 */
export function createValidator(deps: ValidatorDeps) {
  const { storage, clock, keys, issuer } = deps;
  let lastUnknownReload = Number.NEGATIVE_INFINITY;

  async function verify(token: string): Promise<Validation> {
    let kid: string | undefined;
    try {
      const header = decodeProtectedHeader(token);
      if (header.alg !== 'ES256' || typeof header.kid !== 'string' || token.split('.').length !== 3)
        return { valid: false, reason: 'malformed' };
      // OAuth access tokens (typ at+jwt, RFC 9068) are signed by the same keys: they are not identity
      // tokens, and a client's token must never pass for a person's (RFC 8725 §3.11).
      if (header.typ !== undefined && String(header.typ).toLowerCase() !== 'jwt')
        return { valid: false, reason: 'wrong_token_type' };
      kid = header.kid;
    } catch {
      return { valid: false, reason: 'malformed' };
    }
    const published = (await keys.jwks()).keys.some((k) => k.kid === kid);
    if (!published) {
      // Another replica may have rotated since our keys were cached: look once in a while, not per token.
      if (clock.now() - lastUnknownReload < UNKNOWN_KID_RELOAD_MS)
        return { valid: false, reason: 'unknown_key' };
      lastUnknownReload = clock.now();
    }
    try {
      return { valid: true, claims: (await keys.verify(token)) as Record<string, JsonValue> };
    } catch (e) {
      return { valid: false, reason: JOSE_REASONS[(e as { code?: string }).code ?? ''] ?? 'malformed' };
    }
  }

  /** Revoked by its jti, or issued before its person's tokens were revoked (a password reset): one query. */
  async function isRevoked(claims: Record<string, JsonValue>, jti: string, orgId: string): Promise<boolean> {
    const person = typeof claims.person_id === 'string' ? claims.person_id : String(claims.sub ?? '');
    const issued = new Date(issuedAtMs(claims)).toISOString();
    const [row] = await storage.query<{ revoked: boolean }>(
      sql`select exists (select 1 from tokens_revoked where jti = ${jti})
          or exists (select 1 from tokens_person_cutoffs
                     where org_id = ${orgId}::uuid and person_id = ${person} and revoked_before > ${issued}::timestamptz)
          as revoked`,
    );
    return row?.revoked === true;
  }

  return {
    /** Whether an identity token is valid now (for `orgId`, when given), and why not. */
    async validate(token: string, orgId?: string): Promise<Validation> {
      const checked = await verify(token);
      if (!checked.valid) return checked;
      const { claims } = checked;
      // The deployment's issuer, or the organization's own (an ID token of a client bound to it).
      const ofIssuer =
        typeof claims.oid === 'string' ? isIssuerOf(claims.iss, issuer, claims.oid) : claims.iss === issuer;
      if (!ofIssuer) return { valid: false, reason: 'wrong_issuer' };
      if (typeof claims.jti !== 'string' || typeof claims.exp !== 'number' || typeof claims.oid !== 'string')
        return { valid: false, reason: 'malformed' };
      if (!isIdentityAudience(claims)) return { valid: false, reason: 'wrong_token_type' };
      if (orgId !== undefined && claims.oid !== orgId) return { valid: false, reason: 'wrong_organization' };
      if (await isRevoked(claims, claims.jti, claims.oid)) return { valid: false, reason: 'revoked' };
      return checked;
    },
    /**
     * Records a token's jti as revoked until it expires, in `tx`; expired rows of the organization are
     * swept on the way. True when this call recorded it, false when it already was.
     */
    async revoke(tx: Transaction, orgId: string, jti: string, expSeconds: number): Promise<boolean> {
      const now = new Date(clock.now());
      const inserted = await tx.db
        .insert(tokensRevoked)
        .values({ jti, orgId, expiresAt: new Date(expSeconds * 1000), revokedAt: now })
        .onConflictDoNothing()
        .returning({ jti: tokensRevoked.jti });
      await tx.db
        .delete(tokensRevoked)
        .where(and(lt(tokensRevoked.expiresAt, now), eq(tokensRevoked.orgId, orgId)));
      return inserted.length > 0;
    },
  };
}

export type Validator = ReturnType<typeof createValidator>;
