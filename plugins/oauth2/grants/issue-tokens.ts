import {
  type OAuth2Server,
  type OAuthClient,
  OAuthError,
  type OAuthTokenResponse,
} from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { GrantFamilies, IssuedAccess } from './stores.ts';

/** How refresh tokens look: a prefix secret scanners can recognise, then 256 random bits. */
export const REFRESH_PREFIX = 'isr_';

export interface TokenIssuing {
  server: OAuth2Server;
  directory: PersonDirectory;
  families: GrantFamilies;
  /** Seconds a refresh token lives unless the client says otherwise. */
  refreshLifetime: number;
  /** PUBLIC_BASE_URL: under it, each organization's own audience (RFC 8707 resources are checked). */
  publicBaseUrl: string;
}

/** The access token claim that carries what the OIDC `claims` parameter asked for at userinfo. */
export const USERINFO_CLAIMS = 'userinfo_claims';

/** `claims` for issueTokens: the userinfo members asked for, when any. */
export const userinfoClaimsMember = (names: readonly string[]) =>
  names.length ? { claims: { [USERINFO_CLAIMS]: [...names] } } : {};

/**
 * The person a grant acts for must still be there and active: a person disabled or deleted after the
 * login gets no more tokens.
 */
export async function requireActivePerson(directory: PersonDirectory, orgId: string, personId: string) {
  const person = await directory.get(orgId, personId);
  if (!person?.active)
    throw new OAuthError('invalid_grant', 'the person this grant is for is disabled or no longer exists');
  return person;
}

/**
 * Signs the access token and, when the client may refresh, a new refresh token of the family: the
 * response both grants answer (the caller adds the ID token).
 */
export async function issueTokens(
  deps: TokenIssuing,
  o: {
    client: OAuthClient;
    familyId: string;
    personId: string;
    scope: string[];
    authTime: number;
    /** The access token's resource (RFC 8707), checked by the grant; undefined: the organization's own. */
    resource?: string | undefined;
    /** Claims added to the access token (the mint API's). */
    claims?: Readonly<Record<string, JsonValue>>;
    /** Whether to add a refresh token. @default whether the client may use the refresh_token grant */
    refresh?: boolean;
    /** What to throw when the grant was revoked meanwhile. @default the token endpoint's invalid_grant */
    revoked?: () => Error;
    /** The DPoP key the access token is bound to (RFC 9449): token_type DPoP, `cnf.jkt`. */
    dpopJkt?: string | undefined;
  },
): Promise<{ response: OAuthTokenResponse; access: IssuedAccess }> {
  const signed = await deps.server.signAccessToken({
    client: o.client,
    subject: o.personId,
    scope: o.scope,
    authTime: o.authTime,
    ...(o.resource !== undefined ? { resource: o.resource } : {}),
    ...(o.claims ? { claims: o.claims } : {}),
    ...(o.dpopJkt !== undefined ? { dpopJkt: o.dpopJkt } : {}),
  });
  const access = { jti: signed.claims.jti, exp: signed.claims.exp };
  const response: OAuthTokenResponse = {
    access_token: signed.token,
    token_type: o.dpopJkt !== undefined ? 'DPoP' : 'bearer',
    expires_in: signed.expiresIn,
    scope: o.scope.join(' '),
  };
  if (o.refresh ?? o.client.grantTypes.includes('refresh_token')) {
    const refresh = randomSecret(REFRESH_PREFIX);
    const lifetime = o.client.refreshTokenLifetime ?? deps.refreshLifetime;
    if (!(await deps.families.addRefresh(o.familyId, refresh, lifetime * 1000, access)))
      await refuseRevoked(deps, o.client, access, o.revoked);
    response.refresh_token = refresh;
  }
  return { response, access };
}

/**
 * The grant was revoked while its tokens were being issued (a refresh token reused or revoked, a code
 * replayed, revoke-all, a password reset): the access token just signed is revoked too, and none is
 * answered.
 */
export async function refuseRevoked(
  deps: Pick<TokenIssuing, 'server'>,
  client: OAuthClient,
  access: IssuedAccess,
  revoked: () => Error = grantRevoked,
): Promise<never> {
  await deps.server.revokeAccessTokens([
    { oid: client.orgId, client_id: client.clientId, jti: access.jti, exp: access.exp },
  ]);
  throw revoked();
}

const grantRevoked = () =>
  new OAuthError(
    'invalid_grant',
    'the grant was revoked while its tokens were issued (a token reused or revoked, a code replayed, or a revocation of all the grants); none is answered',
  );
