import { DEVICE_CODE_GRANT } from '../../../core/capabilities/oauth2-server.ts';
import { isUnderPublicBaseUrl } from '../../../core/tokens/audience.ts';
import { OAuth2Errors } from '../errors.ts';
import { TOKEN_EXCHANGE } from '../grants/token-exchange.ts';

/** A client's settings that depend on each other. */
export interface ClientShape {
  public: boolean;
  grantTypes: string[];
  redirectUris: string[];
}

/** Drops repeats, keeping the first of each. */
export const unique = <T>(list: readonly T[]): T[] => [...new Set(list)];

/**
 * The rules across fields, checked on create and on the result of a PATCH: a public client has no
 * secret, so no client_credentials nor token exchange; authorization_code needs a redirect URI; refresh tokens come only
 * from authorization_code.
 */
export function checkClientShape(shape: ClientShape, on: 'body' | 'the client after this change'): void {
  const at = (field: string) => (on === 'body' ? `body.${field}` : `body.${field} (${on})`);
  if (shape.public && shape.grantTypes.includes('client_credentials'))
    throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
      `${at('grant_types')}: a public client cannot use client_credentials (it has no secret to authenticate with)`,
    );
  if (shape.public && shape.grantTypes.includes(TOKEN_EXCHANGE))
    throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
      `${at('grant_types')}: a public client cannot use ${TOKEN_EXCHANGE} (it has no secret to authenticate with, so anybody could exchange a token as it)`,
    );
  if (shape.grantTypes.includes('authorization_code') && shape.redirectUris.length === 0)
    throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
      `${at('redirect_uris')}: a client with the authorization_code grant needs at least one redirect URI`,
    );
  if (
    shape.grantTypes.includes('refresh_token') &&
    !shape.grantTypes.includes('authorization_code') &&
    !shape.grantTypes.includes(DEVICE_CODE_GRANT)
  )
    throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
      `${at('grant_types')}: refresh_token needs authorization_code or ${DEVICE_CODE_GRANT} (refresh tokens are issued by those grants)`,
    );
}

/**
 * A client lists only resource servers of its own: never a URI under the service's PUBLIC_BASE_URL,
 * where every organization's own audience is, so that no tenant can have tokens minted for another
 * tenant's audience (its own needs no listing: it is the default).
 */
export function checkResources(resources: readonly string[], publicBaseUrl: string): void {
  resources.forEach((uri, i) => {
    if (isUnderPublicBaseUrl(uri, publicBaseUrl))
      throw OAuth2Errors.INVALID_CLIENT_SETTINGS(
        `body.resources[${i}]: ${JSON.stringify(uri)} is under this service's public base URL (${publicBaseUrl}), where the organizations' own audiences are: list only your own resource servers (access tokens asked without resource are for this organization's own audience)`,
      );
  });
}
