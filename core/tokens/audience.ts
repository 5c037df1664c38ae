import { type OAuthClient, OAuthError } from '../capabilities/oauth2-server.ts';

/**
 * The audience of an organization's access tokens when the client asked for no resource (RFC 8707):
 * the organization's own, under the deployment's public base URL. Every organization's differs, so a
 * resource server that checks `aud` (RFC 9068 §4) never takes another tenant's token.
 *
 * @example
 * organizationAudience('https://id.example.com', '0197…') // 'https://id.example.com/organizations/0197…'
 */
export const organizationAudience = (publicBaseUrl: string, orgId: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/organizations/${orgId}`;

/**
 * Whether a URI is the public base URL or under it: the service's own audiences (every organization's
 * default one among them), which a client may not list among its resources, so that no tenant can have
 * tokens minted for another tenant's audience. Compared as parsed URLs (scheme and host are
 * case-insensitive, a default port is the same as none); a URI that does not parse is not under it.
 */
export function isUnderPublicBaseUrl(uri: string, publicBaseUrl: string): boolean {
  let url: URL;
  let base: URL;
  try {
    url = new URL(uri);
    base = new URL(publicBaseUrl);
  } catch {
    return false;
  }
  if (url.origin !== base.origin || url.origin === 'null') return false;
  // Parsing has resolved dot segments: `https://id.example.com/x/../organizations/…` is under it too.
  const root = base.pathname.replace(/\/+$/, '');
  const path = url.pathname;
  return root === '' || path === root || path.startsWith(`${root}/`);
}

/** Why a second `resource` is refused: an access token here has one audience (RFC 8707 §2 allows it). */
export const ONE_RESOURCE =
  'resource is given more than once: an access token here is for one resource (its aud), so ask for one per request';

/**
 * Why the client may not ask for this resource (RFC 8707 `resource`), or undefined when it may: one of
 * its `resources` exactly, or its organization's own audience (the default, which needs no listing).
 */
export function resourceRefusal(
  client: Pick<OAuthClient, 'orgId' | 'resources'>,
  asked: string,
  publicBaseUrl: string,
): string | undefined {
  if (client.resources.includes(asked) || asked === organizationAudience(publicBaseUrl, client.orgId))
    return undefined;
  const listed = client.resources.length
    ? `its resources: ${client.resources.join(' ')}`
    : 'it lists no resources';
  return `resource ${JSON.stringify(asked)} is not one this client may ask for (${listed}; without resource, the token is for the organization's own audience)`;
}

/**
 * The resource a token request asks for (RFC 8707 `resource`), checked for the client; undefined when
 * none was asked; `invalid_target` when the client may not ask for it.
 */
export function requestedResource(
  client: Pick<OAuthClient, 'orgId' | 'resources'>,
  asked: string | undefined,
  publicBaseUrl: string,
): string | undefined {
  if (asked === undefined) return undefined;
  const refusal = resourceRefusal(client, asked, publicBaseUrl);
  if (refusal !== undefined) throw new OAuthError('invalid_target', refusal);
  return asked;
}

/**
 * The resource of a token issued in a grant (a code's exchange, a refresh): the one the grant was given
 * for (undefined: the organization's own audience). The request may name it again, never another (RFC
 * 8707 §2.2: within the grant); and one an administrator removed from the client since is not issued,
 * as a removed scope is not.
 */
export function grantedResource(
  client: Pick<OAuthClient, 'orgId' | 'resources'>,
  granted: string | undefined,
  asked: string | undefined,
  publicBaseUrl: string,
): string | undefined {
  const own = organizationAudience(publicBaseUrl, client.orgId);
  if (asked !== undefined && asked !== (granted ?? own))
    throw new OAuthError(
      'invalid_target',
      `resource ${JSON.stringify(asked)} is not the one this grant is for (${granted === undefined ? "the organization's own audience" : JSON.stringify(granted)}): a token request may keep the grant's resource, never change it`,
    );
  if (granted !== undefined) {
    const refusal = resourceRefusal(client, granted, publicBaseUrl);
    if (refusal !== undefined)
      throw new OAuthError(
        'invalid_target',
        `resource ${JSON.stringify(granted)} of this grant is no longer one the client may ask for`,
      );
  }
  return granted;
}
