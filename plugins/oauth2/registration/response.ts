import { authMethodOf } from '../clients/metadata-rules.ts';
import type { ClientRow } from '../schema.ts';

/** CORS for the registration endpoints: browser-based clients (an MCP inspector) register too; no cookie is read. */
export const REGISTRATION_CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'www-authenticate, retry-after',
};

/** The URL of a registered client's configuration endpoint (RFC 7592 §1), the same for both issuers. */
export const registrationClientUri = (publicBaseUrl: string, clientId: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/oauth2/register/${clientId}`;

/**
 * The client information response (RFC 7591 §3.2.1, RFC 7592 §3): the client's registered metadata,
 * its client_id_issued_at, its secret when one was just issued (client_secret_expires_at 0: it does
 * not expire), and the registration access token with the URL it is used at.
 */
export function clientInformation(
  row: ClientRow,
  o: { publicBaseUrl: string; secret?: string; registrationAccessToken: string },
): Record<string, unknown> {
  return {
    client_id: row.clientId,
    ...(o.secret !== undefined ? { client_secret: o.secret } : {}),
    client_id_issued_at: Math.floor(row.createdAt / 1000),
    ...(row.public || row.tokenEndpointAuthMethod === 'private_key_jwt'
      ? {}
      : { client_secret_expires_at: 0 }),
    client_name: row.name,
    redirect_uris: row.redirectUris,
    grant_types: row.grantTypes,
    response_types: row.grantTypes.includes('authorization_code') ? ['code'] : [],
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
    post_logout_redirect_uris: row.postLogoutRedirectUris,
    ...(row.backchannelLogoutUri !== null ? { backchannel_logout_uri: row.backchannelLogoutUri } : {}),
    backchannel_logout_session_required: row.backchannelLogoutSessionRequired,
    registration_access_token: o.registrationAccessToken,
    registration_client_uri: registrationClientUri(o.publicBaseUrl, row.clientId),
  };
}

/** A JSON answer of the registration endpoints: never cached, CORS-readable. */
export function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      pragma: 'no-cache',
      ...REGISTRATION_CORS,
    },
  });
}
