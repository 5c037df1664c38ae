import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { organizationAudience } from '../../../core/tokens/audience.ts';
import { DPOP_SIGNING_ALGORITHMS } from '../../../core/tokens/dpop-algorithms.ts';
import { AuthorizeErrors } from '../errors.ts';
import { claimsOfScope, PERSON_CLAIMS, type PersonClaim, personClaims } from './person-claims.ts';

/** The UserInfo response (OIDC Core §5.3; the reference's UserinfoOAuth2Response). */
export interface UserInfo {
  sub: string;
  iss: string;
  /** The client the access token was issued to. */
  aud: string;
  org_id: string;
  email?: string;
  email_verified?: boolean;
  phone_number?: string;
  phone_number_verified?: boolean;
  username?: string;
}

/** RFC 6750 §3: the challenge that says why a bearer token was refused. */
const challenge = (
  error: 'invalid_request' | 'invalid_token' | 'insufficient_scope',
  description: string,
) => ({
  'www-authenticate': `Bearer error="${error}", error_description="${description.replaceAll('"', "'")}"`,
});

const invalid = (description: string) =>
  AuthorizeErrors.INVALID_TOKEN.with({ headers: challenge('invalid_token', description) })(description);

/** RFC 9449 §7.1: the DPoP challenge that says why a DPoP-bound token (or its proof) was refused. */
const dpopRefusal = (
  error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce',
  description: string,
  nonce?: string,
) =>
  AuthorizeErrors.INVALID_TOKEN.with({
    headers: {
      'www-authenticate': `DPoP error="${error}", error_description="${description.replaceAll('"', "'")}", algs="${DPOP_SIGNING_ALGORITHMS.join(' ')}"`,
      ...(nonce !== undefined ? { 'dpop-nonce': nonce } : {}),
    },
  })(description);

/**
 * RFC 6750 §3.1: a request with no authentication information (no Authorization header, or another
 * scheme than Bearer) gets the bare challenge, no error code: it did not present a token to refuse.
 */
const unauthenticated = () =>
  AuthorizeErrors.INVALID_TOKEN.with({ headers: { 'www-authenticate': 'Bearer' } })(
    'an access token is required as Authorization: Bearer <token>',
  );

const isBearer = (header: string) => /^(?:Bearer|DPoP)(?: |$)/i.test(header);

/** The token of an Authorization header of the Bearer or DPoP scheme (RFC 9449 §7.1), or undefined. */
function presentedToken(header: string | null): { token: string; dpop: boolean } | undefined {
  const match = header ? /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header) : null;
  return match ? { token: match[2]!, dpop: match[1]!.toLowerCase() === 'dpop' } : undefined;
}

const malformed = (description: string) =>
  AuthorizeErrors.MALFORMED_BEARER.with({ headers: challenge('invalid_request', description) })(description);

/** The longest form body a userinfo POST may send: an access token and little else. */
const MAX_POSTED_BODY = 16_384;

/**
 * The credentials of a userinfo POST as an Authorization value: the header's, or the `access_token`
 * of a form-encoded body (RFC 6750 §2.2, which OpenID Connect Core §5.3.1 allows and the OpenID
 * Foundation's oidcc-userinfo-post-body uses). Both at once, or the field repeated, is invalid_request
 * (§2: one method per request); a body of another type is left unread.
 */
export async function postedAuthorization(request: Request): Promise<string | null> {
  const header = request.headers.get('authorization');
  const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return header;
  const body = await request.text().catch(() => '');
  if (body.length > MAX_POSTED_BODY)
    throw malformed(`the form body must be at most ${MAX_POSTED_BODY} characters`);
  const tokens = new URLSearchParams(body).getAll('access_token');
  if (tokens.length === 0) return header;
  if (tokens.length > 1 || header !== null)
    throw malformed(
      'the access token must be sent one way, once: the Authorization header or the access_token form field',
    );
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(tokens[0]!))
    throw malformed('access_token must be one bearer token (RFC 6750 section 2.1)');
  return `Bearer ${tokens[0]}`;
}

/**
 * GET and POST /oauth2/userinfo: the person an access token with the openid scope was issued for. The
 * handles the scopes ask for (email, phone, username) are answered as the person has them now, the
 * `_verified` members with the handle's `verified` flag (a link followed, an SSO provider's word, a
 * password reset through that address, or the organization's through the API).
 */
export function createUserInfo(deps: {
  server: OAuth2Server;
  directory: PersonDirectory;
  /** PUBLIC_BASE_URL: the issuer, under which each organization's own audience is. */
  publicBaseUrl: string;
}) {
  /**
   * Userinfo is a resource of the organization's own audience (RFC 9068 §4): a token a client asked for
   * another resource (RFC 8707) is that resource's, which must not be able to replay it here. A token
   * issued before audiences were per organization has the base URL itself, and is taken until it expires.
   */
  const forUserinfo = (aud: string, orgId: string) =>
    aud === organizationAudience(deps.publicBaseUrl, orgId) || aud === deps.publicBaseUrl;
  /**
   * RFC 9449 §7: a DPoP-bound token is taken as `DPoP <token>` with a proof by its key for this
   * request (with `ath`), never as Bearer; an unbound one never as DPoP.
   */
  async function requireBinding(request: Request, token: string, dpop: boolean, jkt: string | undefined) {
    if (jkt === undefined) {
      if (dpop)
        throw invalid('the access token is not DPoP-bound: present it as Authorization: Bearer <token>');
      return;
    }
    if (!dpop)
      throw dpopRefusal(
        'invalid_token',
        'the access token is DPoP-bound: present it as Authorization: DPoP <token>, with a DPoP proof',
      );
    const checked = await deps.server.checkDPoPProof(request, { accessToken: token, jkt });
    if (checked.kind === 'none')
      throw dpopRefusal('invalid_dpop_proof', 'a DPoP-bound access token needs a DPoP proof header');
    if (checked.kind === 'refused') throw dpopRefusal(checked.error, checked.description, checked.nonce);
  }

  /** `authorization`: the header's value, or a POSTed form's access_token as one (RFC 6750 §2.2). */
  return async function userInfo(
    request: Request,
    authorization: string | null = request.headers.get('authorization'),
  ): Promise<UserInfo> {
    const presented = presentedToken(authorization);
    if (!presented) {
      if (authorization === null || !isBearer(authorization)) throw unauthenticated();
      // A malformed request (RFC 6750 §3.1 invalid_request, 400), not a token to refuse.
      const description = 'the Authorization header must be Bearer (or DPoP) and one access token';
      throw AuthorizeErrors.MALFORMED_BEARER.with({ headers: challenge('invalid_request', description) })(
        description,
      );
    }
    const { token } = presented;
    const claims = await deps.server.verifyAccessToken(token);
    if (!claims) throw invalid('the access token is not valid (expired, revoked or not one of this service)');
    await requireBinding(request, token, presented.dpop, claims.cnf?.jkt);
    if (!forUserinfo(claims.aud, claims.oid))
      throw invalid(
        "the access token is for another resource (its aud): userinfo takes the tokens of the organization's own audience, asked for without a resource",
      );
    const scope = claims.scope.split(' ');
    if (!scope.includes('openid'))
      throw AuthorizeErrors.INSUFFICIENT_SCOPE.with({
        headers: challenge('insufficient_scope', 'the access token was not granted the openid scope'),
      })('the access token was not granted the openid scope');
    const person = await deps.directory.get(claims.oid, claims.sub);
    if (!person?.active) throw invalid('the person of this access token is disabled or no longer exists');
    const info: UserInfo = {
      sub: person.personId,
      iss: claims.iss,
      aud: claims.client_id,
      org_id: claims.oid,
    };
    // The scope's members, and those the claims parameter asked for (OIDC Core 5.5).
    const asked = (claims.userinfo_claims ?? []).filter((n): n is PersonClaim =>
      (PERSON_CLAIMS as readonly string[]).includes(n),
    );
    Object.assign(info, personClaims(person, [...claimsOfScope(scope), ...asked]));
    return info;
  };
}
