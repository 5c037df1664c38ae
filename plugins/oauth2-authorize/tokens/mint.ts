import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { AnalyticsContext } from '../../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { resourceRefusal } from '../../../core/tokens/audience.ts';
import {
  ACCESS_TOKEN_CLAIMS,
  ID_TOKEN_CLAIMS,
  reservedClaimOf,
} from '../../../core/tokens/reserved-claims.ts';
import { issueTokens, refuseRevoked, type TokenIssuing } from '../../oauth2/grants/index.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { FamilyStore } from '../store/families.ts';

/** What POST /oauth2/tokens/mint asks, its organization taken from the API key. */
export interface MintRequest {
  orgId: string;
  personId: string;
  clientId: string;
  scopes?: readonly string[];
  /** The access token's resource (RFC 8707), one the client may ask for; absent: the organization's own. */
  resource?: string;
  customClaims?: Readonly<Record<string, JsonValue>>;
  request: AnalyticsContext;
}

/** The minted tokens, as the reference's MintOAuth2TokensResponse names them. */
export interface MintedTokens {
  access_token: string;
  id_token?: string;
  refresh_token?: string;
}

/** The methods the tokens of the mint API carry: the reference's `authenticated_methods`. */
const METHODS = ['api'];

const invalid = AuthorizeErrors.INVALID_MINT_REQUEST;

/** The scopes asked, without repeats; each must be one of the client's. Absent: none. */
function scopesOf(client: OAuthClient, asked: readonly string[] = []): string[] {
  const scope = [...new Set(asked)];
  const foreign = scope.find((s) => !client.scopes.includes(s));
  if (foreign !== undefined)
    throw invalid(
      `scopes: ${JSON.stringify(foreign.slice(0, 128))} is not among client ${client.clientId}'s scopes (${client.scopes.join(', ')})`,
    );
  if (scope.includes('offline_access') && !client.grantTypes.includes('refresh_token'))
    throw invalid(
      `scopes: offline_access asks for a refresh token, and client ${client.clientId} may not use the refresh_token grant (add it to its grant_types, or leave offline_access out)`,
    );
  return scope;
}

/**
 * The mint API: tokens for a person and a client of the organization, without a login. A new grant
 * (token family) is begun, so revocation (revoke, revoke-all, a password reset) reaches its tokens as it
 * reaches a login's. The ID token comes through the tokenIssuer as `mint`: no token_minted hook, never
 * first_token, TokenMinted_v1 with mint_token_api.
 */
export function createMint(
  deps: TokenIssuing & { families: FamilyStore; issuer: TokenIssuer; clock: Clock; headerPrefix: string },
) {
  const product = deps.headerPrefix.toLowerCase();

  /** The first custom claim the caller may not set, refused with 400 naming it. */
  async function checkClaims(orgId: string, claims: Readonly<Record<string, JsonValue>>) {
    const groupsClaim = await deps.directory.groupsClaimName(orgId);
    const refused =
      reservedClaimOf(claims, groupsClaim)?.claim ??
      Object.keys(claims).find((c) => ID_TOKEN_CLAIMS.has(c) || ACCESS_TOKEN_CLAIMS.has(c) || c === product);
    if (refused !== undefined)
      throw invalid(
        `custom_claims.${refused}: ${JSON.stringify(refused)} is a registered or reserved claim and cannot be set`,
      );
  }

  return async function mint(m: MintRequest): Promise<MintedTokens> {
    const client = await deps.server.client(m.clientId);
    if (!client || client.orgId !== m.orgId) throw AuthorizeErrors.MINT_CLIENT_NOT_FOUND(m.clientId);
    const person = await deps.directory.get(m.orgId, m.personId);
    if (!person) throw AuthorizeErrors.MINT_PERSON_NOT_FOUND(m.personId);
    if (!person.active) throw AuthorizeErrors.MINT_PERSON_DISABLED(person.personId);
    const scope = scopesOf(client, m.scopes);
    const unlisted =
      m.resource === undefined ? undefined : resourceRefusal(client, m.resource, deps.publicBaseUrl);
    if (unlisted !== undefined) throw invalid(`resource: ${unlisted}`);
    const custom = m.customClaims ?? {};
    await checkClaims(m.orgId, custom);

    const authTime = Math.floor(deps.clock.now() / 1000);
    // First, as the grants do: a refusal leaves no grant behind.
    const idToken = scope.includes('openid')
      ? await deps.issuer.issue({
          orgId: m.orgId,
          personId: person.personId,
          methods: METHODS,
          issuer: 'mint',
          authentications: [],
          customClaims: custom,
          request: m.request,
          idToken: { clientId: client.clientId, issuer: client.issuer, authTime },
        })
      : undefined;
    const familyId = await deps.families.begin({
      orgId: m.orgId,
      clientId: client.clientId,
      personId: person.personId,
      scope,
      methods: METHODS,
      resource: m.resource,
      authTime,
      sessionId: undefined,
      userinfoClaims: [],
    });
    const { response, access } = await issueTokens(deps, {
      client,
      familyId,
      personId: person.personId,
      scope,
      authTime,
      resource: m.resource,
      claims: { ...custom, authenticated_methods: METHODS },
      refresh: scope.includes('offline_access'),
      revoked: () => AuthorizeErrors.MINT_GRANT_REVOKED(),
    });
    if (response.refresh_token === undefined && !(await deps.families.recordAccess(familyId, access)))
      await refuseRevoked(deps, client, access, () => AuthorizeErrors.MINT_GRANT_REVOKED());
    return {
      access_token: response.access_token,
      ...(idToken ? { id_token: idToken.token } : {}),
      ...(response.refresh_token !== undefined ? { refresh_token: response.refresh_token } : {}),
    };
  };
}

export type Mint = ReturnType<typeof createMint>;
