import { defineCapability } from '../contract/capabilities.ts';
import type { JsonValue } from '../ports/event-bus.ts';
import type { Transaction } from '../ports/storage.ts';
import { type AnalyticsContext, HANDLE_TYPES, type HandleType } from './person-directory.ts';

/** The grant types of the token endpoint (RFC 6749 §4; the registry may hold more, e.g. a device grant). */
export type OAuthGrantType = 'client_credentials' | 'authorization_code' | 'refresh_token' | (string & {});

/** An OAuth 2.0 client of an organization, as the token and authorization endpoints see it. */
export interface OAuthClient {
  orgId: string;
  clientId: string;
  name: string;
  /** `confidential` clients authenticate with their secret; `public` ones have none and must use PKCE. */
  type: 'confidential' | 'public';
  grantTypes: OAuthGrantType[];
  /** Exact-match redirect URIs (https, or http on a loopback host). */
  redirectUris: string[];
  /** The scopes the client may be granted. */
  scopes: string[];
  /**
   * The resources (RFC 8707) the client may ask access tokens for, exact absolute URIs; any other is
   * `invalid_target`. None under PUBLIC_BASE_URL: the organization's own audience needs no listing.
   */
  resources: string[];
  /**
   * Where RP-Initiated Logout 1.0 may send the browser back to: exact-match URIs, checked as the
   * redirect URIs are (its `post_logout_redirect_uris`); [] when nowhere.
   */
  postLogoutRedirectUris: string[];
  /**
   * Where Back-Channel Logout 1.0 logout tokens are posted (its `backchannel_logout_uri`): an absolute
   * https URL (http on a loopback host), no fragment; absent when the client takes none.
   */
  backchannelLogoutUri?: string;
  /** Whether its logout tokens must carry `sid` (its `backchannel_logout_session_required`). */
  backchannelLogoutSessionRequired: boolean;
  /**
   * The organization's own app (its `first_party`, the default): signed in without a consent page.
   * False: a third-party app, shown a consent page naming it and the scopes.
   */
  firstParty: boolean;
  /**
   * Whether its authorization requests must be pushed first (RFC 9126 §6, its
   * `require_pushed_authorization_requests`): a request without a pushed `request_uri` is refused.
   */
  requirePushedAuthorizationRequests: boolean;
  /** Seconds its access tokens live (its access_token_duration, else the deployment's default). */
  accessTokenLifetime?: number;
  /** Seconds its refresh tokens live (its refresh_token_duration, else the deployment's default). */
  refreshTokenLifetime?: number;
  /** How the hosted login looks for this client (PUT /oauth2/clients/{id}/ui-configuration); {} when never set. */
  ui?: OAuthClientUiConfiguration;
  /**
   * The issuer its tokens carry as `iss` and its authorization responses as `iss` (RFC 9207): the
   * deployment's (PUBLIC_BASE_URL), or its organization's own (`organizationIssuer`) when the client is
   * bound to it (its `organization_issuer`, the default of clients registered at the organization's
   * registration endpoint).
   */
  issuer: string;
  /**
   * Its `dpop_bound_access_tokens` (RFC 9449 §5.2): true, every token request of the client must carry
   * a DPoP proof, so none of its tokens is a bearer token. Absent: false.
   */
  dpopBoundAccessTokens?: boolean;
}

/** The handle types a hosted login may accept: every one. */
export const HOSTED_HANDLE_TYPES = HANDLE_TYPES;
export type HostedHandleType = HandleType;

/**
 * A client's hosted-UI configuration as stored, validated when written (the reference's
 * OAuthClientUIConfiguration). The hosted login reads the named members below; every other member is
 * kept and answered as given.
 */
export interface OAuthClientUiConfiguration {
  pageTitle?: string;
  pageBackgroundColor?: string;
  logoUrl?: string;
  faviconUrl?: string;
  supportURL?: string;
  alternativeAuthURL?: string;
  textOverrides?: Record<string, string>;
  themeVars?: Record<string, string>;
  handleTypes?: HostedHandleType[];
  dynamicFlowEnabled?: boolean;
  showBadge?: boolean;
  storeLastFactor?: boolean;
  [member: string]: unknown;
}

/**
 * The RFC 6749 §5.2 error codes (and §4.1.2.1's access_denied), OpenID Connect's at the authorization
 * endpoint, plus what extensions register.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  // OpenID Connect Core §3.1.2.6: the authorization endpoint's.
  | 'login_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  // RFC 8707 §2: a resource indicator the client may not ask for, or a malformed one.
  | 'invalid_target'
  // RFC 9449 §5, §8: a DPoP proof missing where one is required, or refused; the server's nonce needed.
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | (string & {});

/**
 * A refusal by the token endpoint or a grant: answered as the envelope (status 400, 401 or 403, with
 * `meta.cursor_pagination`) carrying RFC 6749 `error` and `error_description` in the same body.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 | 403 = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** The token endpoint's success body (RFC 6749 §5.1), answered bare with Cache-Control: no-store. */
export interface OAuthTokenResponse {
  access_token: string;
  /** `DPoP` for a token bound to the key of the request's DPoP proof (RFC 9449 §5). */
  token_type: 'bearer' | 'DPoP';
  expires_in: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
  /** RFC 8693 §2.2.1: the type of the token a token exchange issued (its access token's URN). */
  issued_token_type?: string;
}

/** One token request, after the endpoint has parsed the form and authenticated the client. */
export interface OAuthGrantRequest {
  /** The authenticated client (a public client is identified by client_id only). */
  client: OAuthClient;
  /** The form parameters, each present once (the endpoint refuses duplicates); credentials removed. */
  params: ReadonlyMap<string, string>;
  request: AnalyticsContext;
  /**
   * The key of the request's DPoP proof (RFC 9449), checked by the endpoint (signature, method, URL,
   * iat, jti once, nonce): the tokens are to be bound to it. Undefined without a proof.
   */
  dpop?: { jkt: string };
}

/** An access token to sign (RFC 9068): the server adds iss, iat, exp, jti and client_id. */
export interface AccessTokenRequest {
  client: OAuthClient;
  /** The person's ID for grants on behalf of a person; the client ID for client_credentials. */
  subject: string;
  scope: string[];
  /** Seconds since the epoch of the person's authentication, when there is one. */
  authTime?: number;
  /**
   * The resource the token is for (RFC 8707), its `aud`; the grant has checked that the client may ask
   * for it. Without one, the organization's own audience (`organizationAudience`).
   */
  resource?: string;
  /**
   * Claims added to the payload (the mint API's custom claims and `authenticated_methods`). The token's
   * own claims above win over them; the caller refuses the names it may not set.
   */
  claims?: Readonly<Record<string, JsonValue>>;
  /**
   * Seconds since the epoch the token may not outlive (a token exchange's subject token's `exp`): its
   * `exp` is the earlier of this and its lifetime's end.
   */
  notAfter?: number;
  /** The JWK SHA-256 thumbprint of the DPoP key the token is bound to: its `cnf.jkt` (RFC 9449 §6). */
  dpopJkt?: string;
}

/** The claims of an access token (RFC 9068), as signed and as verification answers them. */
export interface AccessTokenClaims {
  iss: string;
  /** The person's ID, or the client ID for client_credentials. */
  sub: string;
  /**
   * The resource asked for (RFC 8707), else the organization's own audience (`organizationAudience`:
   * PUBLIC_BASE_URL/organizations/<oid>). Tokens issued before audiences were per organization have
   * PUBLIC_BASE_URL itself.
   */
  aud: string;
  client_id: string;
  /** The organization of the client. */
  oid: string;
  /** Space-delimited granted scopes. */
  scope: string;
  jti: string;
  iat: number;
  exp: number;
  auth_time?: number;
  /** Members the OIDC `claims` parameter asked for at userinfo, beyond the scope's. */
  userinfo_claims?: string[];
  /** The DPoP key the token is bound to (RFC 9449 §6): present it with a proof by that key. */
  cnf?: { jkt: string };
  /** The party acting for `sub` (RFC 8693 §4.1), on a token issued by a token exchange with an actor. */
  act?: ActorClaim;
}

/**
 * RFC 8693 §4.1's `act`: who acts for the subject, the current actor outermost and prior ones nested
 * in its own `act`.
 */
export interface ActorClaim {
  /** The actor: a person's ID, or a client's ID for a client's own token. */
  sub: string;
  /** The client the actor's token was issued to, when it was an access token. */
  client_id?: string;
  act?: ActorClaim;
}

/** What a request's DPoP proof (RFC 9449 §4.3) comes to. */
export type DPoPCheck =
  | { kind: 'none' }
  | { kind: 'valid'; jkt: string }
  | {
      kind: 'refused';
      error: 'invalid_dpop_proof' | 'use_dpop_nonce';
      description: string;
      /** The nonce to send back in the DPoP-Nonce header (with use_dpop_nonce). */
      nonce?: string;
    };

/** A signed access token. */
export interface SignedAccessToken {
  token: string;
  /** Seconds until it expires (the token endpoint's expires_in). */
  expiresIn: number;
  claims: AccessTokenClaims;
}

/** The grant type of the Device Authorization Grant (RFC 8628 §3.4). */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The device authorization endpoint's success body (RFC 8628 §3.2), answered bare with no-store. */
export interface OAuthDeviceAuthorizationResponse {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  /** Seconds the codes live. */
  expires_in: number;
  /** Seconds the device waits between polls of the token endpoint. */
  interval: number;
}

/**
 * The handler of POST /oauth2/device_authorization (RFC 8628 §3.1): called with a client the endpoint
 * authenticated (as the token endpoint does) and that may use the device_code grant.
 */
export interface OAuthDeviceAuthorization {
  handle(request: OAuthGrantRequest): Promise<OAuthDeviceAuthorizationResponse>;
}

/** The pushed authorization request endpoint's success body (RFC 9126 §2.2), answered 201 with no-store. */
export interface OAuthPushedAuthorizationResponse {
  /** `urn:ietf:params:oauth:request_uri:<random>`: what the authorization request names with client_id. */
  request_uri: string;
  /** Seconds the request_uri may be used in. */
  expires_in: number;
}

/**
 * The handler of POST /oauth2/par (RFC 9126 §2): called with a client the endpoint authenticated (as the
 * token endpoint does), the form without the client's credentials nor `request_uri` (refused there), and
 * the key of the request's DPoP proof when it had one (RFC 9449 §10). It validates the parameters as the
 * authorization endpoint would and stores them; a refusal is an OAuthError.
 */
export interface OAuthPushedAuthorization {
  handle(request: OAuthGrantRequest): Promise<OAuthPushedAuthorizationResponse>;
}

/** A handler of one grant type at the token endpoint. */
export interface OAuthGrant {
  type: OAuthGrantType;
  /** The token response; a grant that needs nothing it must wait for may answer at once, not by a promise. */
  handle(request: OAuthGrantRequest): OAuthTokenResponse | Promise<OAuthTokenResponse>;
}

/** Opaque tokens a grant keeps (refresh tokens), for the introspection and revocation endpoints. */
export interface OAuthTokenStore {
  /** RFC 7662 members for an active token of this client's organization, or undefined when not one's own. */
  introspect(client: OAuthClient, token: string): Promise<Record<string, unknown> | undefined>;
  /** Revokes the token (and what RFC 7009 says goes with it); true when it was one of this store's. */
  revoke(client: OAuthClient, token: string): Promise<boolean>;
  /**
   * Revokes every grant this client holds for the person (of the client's organization) begun at or
   * before `until` (milliseconds since the epoch), with the access tokens issued in them: what POST
   * /oauth2/tokens/revoke-all asks of each store. A person the store knows nothing of changes nothing.
   */
  revokeAll?(client: OAuthClient, personId: string, until: number): Promise<void>;
}

/**
 * The OAuth 2.0 authorization server's core (the oauth2 plugin): clients, access-token signing, and a
 * registry of grants. Other plugins (the authorization endpoint with its hosted login) add grants.
 *
 * @example
 * setup(ctx, { server }) { server.addGrant({ type: 'refresh_token', handle: async (r) => ... }) }
 */
export interface OAuth2Server {
  /** The client with this ID (client IDs are unique across the deployment), or undefined. */
  client(clientId: string): Promise<OAuthClient | undefined>;
  /** Signs an RFC 9068 access token (typ at+jwt) with the deployment's token keys. */
  signAccessToken(request: AccessTokenRequest): Promise<SignedAccessToken>;
  /**
   * The claims of an active access token of this deployment (typ at+jwt, signature, issuer, expiry, not
   * revoked, its client still there), or undefined: what userinfo and introspection trust. Whatever
   * its `aud`: a caller that is a resource server of one audience checks it (userinfo takes only the
   * organization's own).
   */
  verifyAccessToken(token: string): Promise<AccessTokenClaims | undefined>;
  /**
   * Revokes access tokens until they expire: what a replayed authorization code issued, or what a
   * person held when their password was reset. With `tx`, in the caller's transaction, so they are
   * revoked with the change that revokes them or not at all.
   */
  revokeAccessTokens(
    tokens: readonly Pick<AccessTokenClaims, 'oid' | 'jti' | 'exp' | 'client_id'>[],
    options?: { tx?: Transaction },
  ): Promise<void>;
  /**
   * Checks the request's DPoP proof for its method and this service's URL of its path: a dpop+jwt by
   * the public key in its header, iat within a minute, its jti never seen before by any replica, the
   * server's nonce when OAUTH2_DPOP_NONCE is on; with `accessToken`, its `ath`, with `jkt`, its key.
   */
  checkDPoPProof(request: Request, o?: { accessToken?: string; jkt?: string }): Promise<DPoPCheck>;
  /** Registers the handler of a grant type; a second handler for one type is a start-up error. */
  addGrant(grant: OAuthGrant): void;
  /**
   * Registers the handler of the device authorization endpoint (the plugin with the hosted page where
   * the person approves); a second one is a start-up error. Without one the endpoint answers
   * unsupported_grant_type.
   */
  setDeviceAuthorization(handler: OAuthDeviceAuthorization): void;
  /**
   * Registers the handler of the pushed authorization request endpoint (the plugin with the
   * authorization endpoint); a second one is a start-up error. Without one the endpoint is not offered.
   */
  setPushedAuthorization(handler: OAuthPushedAuthorization): void;
  /** Registers a store of opaque tokens that introspection and revocation consult. */
  addTokenStore(store: OAuthTokenStore): void;
}

/** Provided by the oauth2 plugin. */
export const oauth2Server = defineCapability<OAuth2Server>('oauth2Server');
