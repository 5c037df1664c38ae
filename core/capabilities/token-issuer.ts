import { defineCapability } from '../contract/capabilities.ts';
import type { JsonValue } from '../ports/event-bus.ts';
import type { Transaction } from '../ports/storage.ts';
import type { TokenAuthentication } from '../tokens/before-token-issued.ts';
import type { SignedAccessToken } from './oauth2-server.ts';
import type { AnalyticsContext, PersonRecord, ProspectivePerson } from './person-directory.ts';

/** What a factor (or the mint-token API) asks the issuer for. */
export interface IssueRequest {
  orgId: string;
  personId: string;
  /** `authenticated_methods`: the factors of this authentication (`["password"]`, `["api"]` for mint-token). */
  methods: string[];
  /** What issues it: `authentication` and `anonymous` run beforeTokenIssued; `mint` never does. */
  issuer: 'authentication' | 'anonymous' | 'oauth2' | 'mint';
  /** The authentications that led to it, for the hook's trigger content and TokenMinted_v1. */
  authentications: TokenAuthentication[];
  /** Claims the caller adds (mint-token's custom_claims); registered and reserved claims are refused. */
  customClaims?: Record<string, JsonValue>;
  /** The person's earlier anonymous identity, when a sign-in follows one (TokenMinted_v1). */
  prevAnonymousPersonId?: string;
  /** The request behind it: the hook's request_metadata and the events' analytics_metadata. */
  request: AnalyticsContext;
  /**
   * An OpenID Connect ID token (issuer `oauth2`): `aud` and `azp` are the client, with `nonce` and
   * `auth_time` (seconds since the epoch) as the authentication request gave them.
   */
  idToken?: {
    clientId: string;
    /**
     * The client's issuer, the ID token's `iss`: the deployment's (the default) or its organization's own
     * (core/tokens/issuers.ts). Another organization's is refused.
     */
    issuer?: string;
    nonce?: string;
    authTime: number;
    /** The sign-in session (`sid`, OpenID Connect Front- and Back-Channel Logout). */
    sessionId?: string;
    /** RFC 8176 values of the factors used (`amr`). */
    amr?: string[];
    /** The authentication context class met, when one was asked for (`acr`). */
    acr?: string;
    /** Members of the person the `claims` parameter asked for in the ID token (email, ...). */
    claims?: Record<string, JsonValue>;
  };
  /**
   * Runs beforeTokenIssued for its decision only, for an authentication whose caller hands out no
   * identity token (an OAuth login without `openid`): nothing is signed (`token` is empty), no
   * TokenMinted_v1 announces a token nobody holds, and the person's first token is left to a real one.
   * @default false
   */
  hookOnly?: boolean;
  /**
   * An OAuth access token the caller signs in place of an identity token (issuer `oauth2`; the token
   * exchange grant, RFC 8693): beforeTokenIssued decides as for any token issued for the person (the
   * claims its handlers return are not added: they are identity tokens'), then this signs it and
   * TokenMinted_v1 announces it by its `jti`, `iat` and `exp`, never as the person's first token. The
   * answer is that token, its claims those of the access token. Not with `idToken` or `hookOnly`.
   */
  accessToken?: () => Promise<SignedAccessToken>;
  /**
   * The person `personId` names, as the caller read it from the person directory moments ago in the
   * same request (a sign-in session's check that its person is active): the issuer takes it instead of
   * reading the person again. The issuer still refuses one of another organization, or disabled. Not
   * with `prospective`.
   */
  person?: PersonRecord;
  /**
   * A person to store only if the token_minted hook allows the token (its `person.personId` is
   * `personId`): a sign-up. Stored after the hook and before the signature, so a blocked one leaves no
   * person; for `hookOnly` too. The caller keeps no person of its own until the issuance succeeds.
   */
  prospective?: ProspectivePerson;
}

/** An issued token. */
export interface IssuedToken {
  token: string;
  tokenId: string;
  claims: Record<string, JsonValue>;
  firstToken: boolean;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

/** Why a token does not validate. */
export type InvalidReason =
  | 'malformed'
  | 'bad_signature'
  | 'unknown_key'
  | 'expired'
  | 'revoked'
  | 'wrong_issuer'
  /** A genuine token of another organization than the one asking. */
  | 'wrong_organization'
  /**
   * A genuine token of this deployment that is not an identity token: an OAuth access token (typ
   * at+jwt) or an OpenID Connect ID token (aud a client, not the organization).
   */
  | 'wrong_token_type';

/** What to revoke: a token `validate` accepted, named by its claims. */
export interface TokenRevocation {
  orgId: string;
  /** The token's `jti`. */
  tokenId: string;
  /** The token's `exp` (seconds since the epoch): the revocation is kept until then. */
  expiresAt: number;
  /** The token's person, for the onTokenRevoked handlers. */
  personId?: string;
  /** `logout` for the person's own call, `api` for POST /token/revoke. */
  reason: 'logout' | 'api';
}

/**
 * An OpenID Connect ID token of this deployment, as a logout request's `id_token_hint` gives it: signed
 * by the token keys, of this issuer, for a client. Possibly expired (RP-Initiated Logout 1.0 takes
 * those).
 */
export interface VerifiedIdToken {
  /** Its `oid`. */
  orgId: string;
  /** Its `aud`: the client it was issued to. */
  clientId: string;
  /** Its `sub`. */
  personId: string;
  /** Its `sid`: the sign-in session it came from, when it names one. */
  sessionId?: string;
  /** Its `iat` and `exp`, seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

/**
 * What a back-channel logout token names (OpenID Connect Back-Channel Logout 1.0, section 2.4): the
 * client it is for, whose session of which person ended.
 */
export interface LogoutTokenRequest {
  orgId: string;
  /** The token's `aud`: the client told of the logout. */
  clientId: string;
  /** The token's `sub`: the person, as the client's ID tokens name them. */
  personId: string;
  /** The token's `sid`: the sign-in session, as the client's ID tokens name it (never a cookie's secret). */
  sessionId: string;
  /** The token's `iss`: the client's issuer, as its ID tokens carry it; the deployment's by default. */
  issuer?: string;
}

/** Signs identity tokens for persons, runs beforeTokenIssued before signing, validates and revokes them. */
export interface TokenIssuer {
  /**
   * Issues a token: builds the claims (iss, sub, aud (the organization ID; an ID token's is its
   * client), oid, person_id, authenticated_methods, first_token, jti, iat, exp, groups under the
   * organization's claim name, custom claims), runs beforeTokenIssued (except for `mint`), signs with
   * the deployment's token key, and publishes TokenMinted_v1 (AnonymousTokenMinted_v1 when the person
   * is anonymous, whatever issues it). `first_token` is true only on the first token of an
   * authentication, never for `mint`. A handler's error (a blocked issuance) reaches the caller.
   */
  issue(request: IssueRequest): Promise<IssuedToken>;
  /**
   * Whether an identity token is valid now (for `orgId`, when given: another organization's is not), and
   * why not. Only identity tokens: an ID token or an access token, signed by the same keys, is
   * `wrong_token_type`.
   */
  validate(
    token: string,
    orgId?: string,
  ): Promise<{ valid: true; claims: Record<string, JsonValue> } | { valid: false; reason: InvalidReason }>;
  /**
   * Revokes a token until it expires: `validate` answers `revoked` from then on. Give it the claims of a
   * token `validate` accepted. With `tx`, the revocation commits or rolls back with the caller's own
   * writes (its event, say). Runs onTokenRevoked in the same transaction when the token is newly
   * revoked: where the refresh-token family issued with it goes, once OAuth issues them. True when this
   * call revoked it, false when it already was (of two racing calls, one gets true).
   */
  revoke(revocation: TokenRevocation, options?: { tx?: Transaction }): Promise<boolean>;
  /**
   * The claims of an ID token this deployment issued (signature with the token keys, `iss`, typ JWT, an
   * `aud` that is a client and not an organization), expired or not; undefined for anything else: an
   * identity token, an access token, a logout token, another issuer's, a forgery. Whether the client
   * still exists is the caller's to check.
   */
  verifyIdToken(token: string): Promise<VerifiedIdToken | undefined>;
  /**
   * Signs a back-channel logout token, like an ID token (the deployment's token keys, ES256, `kid`,
   * `iss` PUBLIC_BASE_URL) with the header `typ: logout+jwt`: `aud` the client, `sub` the person, `sid`
   * the session, `oid` the organization, `iat` now, `exp` two minutes later, a fresh `jti` and the
   * back-channel logout event; never a `nonce`. No hook runs and no event is published: a logout token
   * is a notice to a client, signed afresh for each attempt to deliver it.
   *
   * @example
   * const jwt = await issuer.signLogoutToken({ orgId, clientId, personId, sessionId });
   * // POST logout_token=<jwt> to the client's backchannel_logout_uri
   */
  signLogoutToken(request: LogoutTokenRequest): Promise<string>;
}

/** Provided by the tokens plugin. */
export const tokenIssuer = defineCapability<TokenIssuer>('tokenIssuer');
