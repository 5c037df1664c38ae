import {
  type AccessTokenClaims,
  type ActorClaim,
  type OAuth2Server,
  type OAuthClient,
  OAuthError,
  type OAuthGrant,
  type OAuthTokenResponse,
} from '../../../core/capabilities/oauth2-server.ts';
import type { AnalyticsContext, PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { requestedResource } from '../../../core/tokens/audience.ts';
import { parseScope } from './scope.ts';

/** The grant type of RFC 8693. */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 8693 §3 token type identifiers. */
export const TOKEN_TYPES = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
} as const;

/** The one way a person's token is named in TokenMinted_v1's authentications: the exchange itself. */
export const EXCHANGE_METHOD = 'token_exchange';

/**
 * A subject or actor token found acceptable: whose it is, what it allowed, and the delegation it
 * already carried.
 */
interface PresentedToken {
  sub: string;
  /** The client an access token was issued to; undefined for an identity token. */
  clientId: string | undefined;
  /** The scope an access token had; undefined for an identity token (a person's own, the client's scopes). */
  scope: string[] | undefined;
  authTime: number | undefined;
  /** Its `exp`, seconds since the epoch: what is issued for it never outlives it. */
  expiresAt: number;
  methods: string[];
  act: ActorClaim | undefined;
}

/**
 * RFC 8693 §2.2.2: a subject or actor token that is invalid, or unacceptable by policy, is
 * invalid_request (a MUST), with the reason naming the parameter.
 */
const refused = (param: string, reason: string) => new OAuthError('invalid_request', `${param} ${reason}`);

const isActor = (v: unknown, depth = 0): v is ActorClaim => {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || depth > 8) return false;
  const a = v as Record<string, unknown>;
  return (
    typeof a.sub === 'string' &&
    (a.client_id === undefined || typeof a.client_id === 'string') &&
    (a.act === undefined || isActor(a.act, depth + 1))
  );
};

/** The `act` of a token's claims, when it carries a well-formed one. */
const actOf = (claims: { act?: unknown }): ActorClaim | undefined =>
  isActor(claims.act) ? claims.act : undefined;

const stringsOf = (v: JsonValue | undefined): string[] =>
  Array.isArray(v) ? v.filter((m): m is string => typeof m === 'string') : [];

export interface TokenExchangeDeps {
  server: Pick<OAuth2Server, 'verifyAccessToken' | 'signAccessToken'>;
  issuer: Pick<TokenIssuer, 'validate' | 'issue'>;
  /** The persons, when the persons plugin is set up (read at each exchange). */
  directory: () => Pick<PersonDirectory, 'get'> | undefined;
  clock: Clock;
  publicBaseUrl: string;
}

/**
 * The token exchange grant (RFC 8693): a confidential client whose grant types include it trades a
 * person's token of its organization (`subject_token`: an access token of this service, or an
 * identity token) for an access token for the person, for the resource it asks (`resource` or
 * `audience`, one of its `resources`; else the organization's own audience), with a scope never wider
 * than the subject token's nor the client's. Without `actor_token` the new token impersonates the
 * person; with one it carries `act` (§4.1: the actor, prior actors nested). The token_minted hook
 * decides and TokenMinted_v1 announces the token, through the token issuer (`accessToken`). With a
 * DPoP proof the token is bound to its key (token_type DPoP, `cnf.jkt`, RFC 9449). No refresh token.
 */
export function tokenExchangeGrant(deps: TokenExchangeDeps): OAuthGrant {
  /** A presented token of the client's organization, or the refusal naming `param`. */
  async function readToken(
    client: OAuthClient,
    param: 'subject_token' | 'actor_token',
    token: string,
    type: string,
  ): Promise<PresentedToken> {
    if (type === TOKEN_TYPES.accessToken) {
      const claims: AccessTokenClaims | undefined = await deps.server.verifyAccessToken(token);
      if (!claims)
        throw refused(
          param,
          'is not an active access token of this service (malformed, forged, expired, revoked, or of a deleted client)',
        );
      if (claims.oid !== client.orgId) throw refused(param, "is of another organization than the client's");
      return {
        sub: claims.sub,
        clientId: claims.client_id,
        scope: claims.scope.split(' ').filter((s) => s !== ''),
        authTime: claims.auth_time,
        expiresAt: claims.exp,
        methods: [],
        act: actOf(claims),
      };
    }
    if (type === TOKEN_TYPES.jwt) {
      const checked = await deps.issuer.validate(token, client.orgId);
      if (!checked.valid) {
        const why: Record<typeof checked.reason, string> = {
          malformed: 'is not a JWT',
          bad_signature: 'has a signature that does not verify',
          unknown_key: 'is signed by a key this service does not publish',
          expired: 'has expired',
          revoked: 'has been revoked',
          wrong_issuer: 'was issued by another issuer',
          wrong_organization: "is of another organization than the client's",
          wrong_token_type: `is not an identity token (an ID token is for the client it was issued to and is never exchanged; send an access token as ${TOKEN_TYPES.accessToken})`,
        };
        throw refused(param, why[checked.reason]);
      }
      const { claims } = checked;
      if (typeof claims.sub !== 'string' || typeof claims.exp !== 'number')
        throw refused(param, 'names no subject or no expiry');
      return {
        sub: claims.sub,
        clientId: undefined,
        scope: undefined,
        authTime: undefined,
        expiresAt: claims.exp,
        methods: stringsOf(claims.authenticated_methods),
        act: undefined,
      };
    }
    const typeParam = `${param}_type`;
    if (type === TOKEN_TYPES.idToken)
      throw refused(
        typeParam,
        `${JSON.stringify(type)} is refused: an ID token is for the client it was issued to; exchange an access token (${TOKEN_TYPES.accessToken}) or an identity token (${TOKEN_TYPES.jwt})`,
      );
    throw refused(
      typeParam,
      `${JSON.stringify(type.slice(0, 128))} is not supported (supported: ${TOKEN_TYPES.accessToken}, ${TOKEN_TYPES.jwt})`,
    );
  }

  /** The new token's resource: `resource` or `audience` (one resource URI, the client's rules). */
  function targetOf(client: OAuthClient, params: ReadonlyMap<string, string>): string | undefined {
    const resource = params.get('resource');
    const audience = params.get('audience');
    if (resource !== undefined && audience !== undefined && resource !== audience)
      throw new OAuthError(
        'invalid_target',
        'resource and audience name different targets: an access token here is for one (its aud), so ask for one per request',
      );
    const asked = resource ?? audience;
    try {
      return requestedResource(client, asked, deps.publicBaseUrl);
    } catch (error) {
      if (error instanceof OAuthError && resource === undefined && audience !== undefined)
        throw new OAuthError('invalid_target', error.description.replace(/^resource /, 'audience '));
      throw error;
    }
  }

  /** The scope asked, within the subject token's and the client's; absent: all of that. */
  function scopeOf(client: OAuthClient, subject: PresentedToken, asked: string | undefined): string[] {
    const allowed = client.scopes.filter((s) => subject.scope === undefined || subject.scope.includes(s));
    if (asked === undefined) return allowed;
    const scope = parseScope(asked);
    if (!scope || scope.length === 0)
      throw new OAuthError(
        'invalid_scope',
        'scope must be space-delimited scope tokens (RFC 6749 section 3.3)',
      );
    const wider = scope.filter((s) => !allowed.includes(s));
    if (wider.length)
      throw new OAuthError(
        'invalid_scope',
        `scope ${wider.join(' ').slice(0, 256)} is beyond what may be exchanged: the subject_token's scope narrowed to the client's (${allowed.join(' ') || 'none'})`,
      );
    return scope;
  }

  async function requireActive(orgId: string, personId: string) {
    const directory = deps.directory();
    // Without the persons plugin the token issuer, which reads the person too, refuses instead.
    if (!directory) return;
    const person = await directory.get(orgId, personId);
    if (!person?.active)
      throw refused('subject_token', 'is for a person who is disabled or no longer exists');
  }

  return {
    type: TOKEN_EXCHANGE,
    async handle({ client, params, request, dpop }): Promise<OAuthTokenResponse> {
      // Clients are validated so that a public one never lists this grant; this holds if that ever changes.
      if (client.type === 'public')
        throw new OAuthError('unauthorized_client', 'a public client cannot exchange tokens');
      const requested = params.get('requested_token_type');
      if (requested !== undefined && requested !== TOKEN_TYPES.accessToken)
        throw new OAuthError(
          'invalid_request',
          `requested_token_type ${JSON.stringify(requested.slice(0, 128))} is not issued here (only ${TOKEN_TYPES.accessToken})`,
        );
      const subjectToken = params.get('subject_token');
      if (subjectToken === undefined) throw new OAuthError('invalid_request', 'subject_token is required');
      const subjectType = params.get('subject_token_type');
      if (subjectType === undefined)
        throw new OAuthError('invalid_request', 'subject_token_type is required');
      const actorToken = params.get('actor_token');
      const actorType = params.get('actor_token_type');
      if (actorToken !== undefined && actorType === undefined)
        throw new OAuthError('invalid_request', 'actor_token_type is required with actor_token');
      if (actorToken === undefined && actorType !== undefined)
        throw new OAuthError('invalid_request', 'actor_token_type must not be sent without actor_token');
      // The target and the scope are checked before any token, so a malformed request costs no lookup.
      const resource = targetOf(client, params);

      const subject = await readToken(client, 'subject_token', subjectToken, subjectType);
      // A client's own token (client_credentials: sub is the client) names no person to act for.
      if (subject.clientId !== undefined && subject.sub === subject.clientId)
        throw refused('subject_token', "is a client's own token (client_credentials), not a person's");
      const scope = scopeOf(client, subject, params.get('scope'));
      const actor =
        actorToken === undefined || actorType === undefined
          ? undefined
          : await readToken(client, 'actor_token', actorToken, actorType);
      await requireActive(client.orgId, subject.sub);

      // §4.1: the current actor outermost, the subject token's actors (a delegation before) nested.
      const act: ActorClaim | undefined = actor
        ? {
            sub: actor.sub,
            ...(actor.clientId !== undefined ? { client_id: actor.clientId } : {}),
            ...(subject.act ? { act: subject.act } : {}),
          }
        : subject.act;
      const notAfter = Math.min(subject.expiresAt, actor?.expiresAt ?? Number.POSITIVE_INFINITY);
      const dpopJkt = dpop?.jkt;
      const issued = await issue(client, subject, { scope, resource, act, notAfter, request, dpopJkt });
      return {
        access_token: issued.token,
        issued_token_type: TOKEN_TYPES.accessToken,
        token_type: dpopJkt !== undefined ? 'DPoP' : 'bearer',
        expires_in: issued.expiresAt - issued.issuedAt,
        scope: scope.join(' '),
      };
    },
  };

  /**
   * The access token, through the token issuer: the token_minted hook decides on it (a refusal is the
   * subject's, invalid_request) and TokenMinted_v1 announces it, the exchange as its authentication.
   */
  async function issue(
    client: OAuthClient,
    subject: PresentedToken,
    o: {
      scope: string[];
      resource: string | undefined;
      act: ActorClaim | undefined;
      /** The subject and actor tokens' earlier `exp`. */
      notAfter: number;
      request: AnalyticsContext;
      /** The key of the request's DPoP proof: the token is bound to it (RFC 9449 §6, `cnf.jkt`). */
      dpopJkt: string | undefined;
    },
  ) {
    try {
      return await deps.issuer.issue({
        orgId: client.orgId,
        personId: subject.sub,
        methods: subject.methods,
        issuer: 'oauth2',
        authentications: [
          {
            handle: { type: '', value: '' },
            method: EXCHANGE_METHOD,
            timestamp: new Date(deps.clock.now()).toISOString(),
          },
        ],
        request: o.request,
        accessToken: () =>
          deps.server.signAccessToken({
            client,
            subject: subject.sub,
            scope: o.scope,
            // Never beyond the tokens presented: exchanging each answer again would otherwise keep a
            // person's access alive for ever, past a password reset or a revocation of theirs.
            notAfter: o.notAfter,
            ...(subject.authTime !== undefined ? { authTime: subject.authTime } : {}),
            ...(o.resource !== undefined ? { resource: o.resource } : {}),
            ...(o.act ? { claims: { act: actClaim(o.act) } } : {}),
            ...(o.dpopJkt !== undefined ? { dpopJkt: o.dpopJkt } : {}),
          }),
      });
    } catch (error) {
      if (error instanceof ServiceError && error.status === 403)
        throw refused('subject_token', `was refused by the token_minted hook: ${error.message}`);
      throw error;
    }
  }
}

/** `act` as JSON, its members only. */
function actClaim(act: ActorClaim): { [k: string]: JsonValue } {
  return {
    sub: act.sub,
    ...(act.client_id !== undefined ? { client_id: act.client_id } : {}),
    ...(act.act ? { act: actClaim(act.act) } : {}),
  };
}
