import type * as v from 'valibot';
import { organizationIssuer } from '../../../core/tokens/issuers.ts';
import type { ClientRow, ClientSchema } from '../schema.ts';
import type { LifetimeDefaults } from './cache.ts';
import { authMethodOf } from './metadata-rules.ts';

/** A client as the API shows it (reference OAuth2Client); never its secret or digest. */
export function toClientResponse(
  row: ClientRow,
  defaults: LifetimeDefaults,
  publicBaseUrl: string,
): v.InferOutput<typeof ClientSchema> {
  return {
    client_id: row.clientId,
    client_name: row.name,
    grant_types: row.grantTypes,
    response_types: row.grantTypes.includes('authorization_code') ? [['code']] : [],
    scopes: row.scopes,
    access_token_duration: row.accessTokenDuration ?? defaults.accessTokenSeconds,
    refresh_token_duration: row.refreshTokenDuration ?? defaults.refreshTokenSeconds,
    public: row.public,
    redirect_uris: row.redirectUris,
    resources: row.resources,
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    ...(row.backchannelLogoutUri !== null ? { backchannel_logout_uri: row.backchannelLogoutUri } : {}),
    backchannel_logout_session_required: row.backchannelLogoutSessionRequired,
    first_party: row.firstParty,
    organization_issuer: row.organizationIssuer,
    issuer: row.organizationIssuer ? organizationIssuer(publicBaseUrl, row.orgId) : publicBaseUrl,
    token_endpoint_auth_method: authMethodOf(row),
    scope: row.scopes.join(' '),
    ...(row.jwks !== null ? { jwks: row.jwks } : {}),
    ...(row.jwksUri !== null ? { jwks_uri: row.jwksUri } : {}),
    ...(row.clientUri !== null ? { client_uri: row.clientUri } : {}),
    ...(row.logoUri !== null ? { logo_uri: row.logoUri } : {}),
    ...(row.policyUri !== null ? { policy_uri: row.policyUri } : {}),
    ...(row.tosUri !== null ? { tos_uri: row.tosUri } : {}),
    contacts: row.contacts,
    ...(row.softwareId !== null ? { software_id: row.softwareId } : {}),
    ...(row.softwareVersion !== null ? { software_version: row.softwareVersion } : {}),
    require_pushed_authorization_requests: row.requirePushedAuthorizationRequests,
    dpop_bound_access_tokens: row.dpopBoundAccessTokens,
    created_at: new Date(row.createdAt).toISOString(),
    ...(row.lastUsedAt !== null ? { last_used: new Date(row.lastUsedAt).toISOString() } : {}),
  };
}
