import { type AccessTokenClaims, OAuthError } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import { SCOPE_TOKEN } from '../schema.ts';
import type { AccessTokens } from './access-tokens.ts';
import { type EndpointDeps, oauthEndpoint } from './endpoint.ts';
import { emptyAnswer, jsonAnswer } from './responses.ts';
import { SCOPE_LIST_RULE } from './scopes.ts';

const looksLikeJwt = (token: string) => token.split('.').length === 3;

function requireToken(params: Map<string, string>): { token: string; refreshFirst: boolean } {
  const token = params.get('token');
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
  // token_type_hint only orders the lookups (RFC 7009 §2.1): an unknown hint is ignored.
  return { token, refreshFirst: params.get('token_type_hint') === 'refresh_token' || !looksLikeJwt(token) };
}

/**
 * The scopes an introspection asks the token to have (the reference's `scope`: a token not granted
 * every one of them is not active); undefined when not asked.
 */
function requiredScopes(params: Map<string, string>): string[] | undefined {
  const scope = params.get('scope');
  if (scope === undefined) return undefined;
  const scopes = scope.split(' ');
  if (!scopes.every((s) => SCOPE_TOKEN.test(s))) throw new OAuthError('invalid_request', SCOPE_LIST_RULE);
  return scopes;
}

/** Whether an active token's members grant every required scope (none required: yes). */
const grants = (members: object, required: readonly string[] | undefined): boolean => {
  if (!required) return true;
  const granted = 'scope' in members && typeof members.scope === 'string' ? members.scope.split(' ') : [];
  return required.every((s) => granted.includes(s));
};

/**
 * Whether the subject of an access token may still act: a person must still be there and active, the
 * rule userinfo and the refresh grant apply. A client_credentials token's subject is its client (sub is
 * the client ID, and IDs are UUIDs), which verification has already found. Without a person directory
 * no grant acts for a person, so there is no one to check.
 */
async function subjectActive(claims: AccessTokenClaims, persons: () => PersonDirectory | undefined) {
  if (claims.sub === claims.client_id) return true;
  const directory = persons();
  if (!directory) return true;
  // The directory batches reads that arrive together: a burst of introspections is one query.
  return (await directory.get(claims.oid, claims.sub))?.active === true;
}

/**
 * POST /oauth2/tokens/introspect (RFC 7662). Only confidential clients may ask; an access token or a
 * token of a registered store is active for clients of its own organization (an access token while its
 * person is active), and every other token, another organization's included, is `{"active": false}`.
 */
export function introspectionEndpoint(
  deps: EndpointDeps,
  accessTokens: AccessTokens,
  persons: () => PersonDirectory | undefined,
) {
  return oauthEndpoint(deps, async (client, params) => {
    if (client.type === 'public')
      throw new OAuthError(
        'invalid_client',
        `client ${client.clientId} is public: introspection needs a client that authenticates with a secret`,
        401,
      );
    const { token, refreshFirst } = requireToken(params);
    const required = requiredScopes(params);
    const fromStores = async () => {
      for (const store of deps.registry.tokenStores) {
        const members = await store.introspect(client, token);
        if (members) return { ...members, active: true };
      }
      return undefined;
    };
    const fromJwt = async () => {
      const claims = looksLikeJwt(token) ? await accessTokens.verify(token) : undefined;
      if (!claims || claims.oid !== client.orgId || !(await subjectActive(claims, persons))) return undefined;
      // The token's claims, then what the server states of it: no claim stands in for those.
      // A DPoP-bound token answers its cnf (RFC 9449 §6.2), among its claims, and token_type DPoP.
      return { ...claims, active: true, token_type: claims.cnf ? 'DPoP' : 'Bearer' };
    };
    const found = refreshFirst
      ? ((await fromStores()) ?? (await fromJwt()))
      : ((await fromJwt()) ?? (await fromStores()));
    return jsonAnswer(found && grants(found, required) ? found : { active: false });
  });
}

/**
 * POST /oauth2/tokens/revoke (RFC 7009). An access token issued to this client is revoked until it
 * expires (its jti recorded); one of another client of the organization is refused; a token that is not
 * one (invalid, expired, another organization's) answers 200 and changes nothing.
 */
export function revocationEndpoint(deps: EndpointDeps, accessTokens: AccessTokens) {
  return oauthEndpoint(deps, async (client, params) => {
    const { token, refreshFirst } = requireToken(params);
    const inStores = async () => {
      for (const store of deps.registry.tokenStores) if (await store.revoke(client, token)) return true;
      return false;
    };
    const asJwt = async () => {
      const claims = looksLikeJwt(token) ? await accessTokens.verify(token) : undefined;
      if (!claims || claims.oid !== client.orgId) return false;
      if (claims.client_id !== client.clientId)
        throw new OAuthError('unauthorized_client', 'the token was issued to another client');
      await accessTokens.revoke([claims]);
      return true;
    };
    if (refreshFirst) (await inStores()) || (await asJwt());
    else (await asJwt()) || (await inStores());
    return emptyAnswer();
  });
}
