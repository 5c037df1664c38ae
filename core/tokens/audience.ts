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

/**
 * The resource an authorization or token request asks for (RFC 8707 `resource`), checked for the
 * client: one of its `resources` exactly, or its organization's own audience (the default, which needs
 * no listing). Undefined when none was asked; `invalid_target` for any other.
 */
export function requestedResource(
  client: Pick<OAuthClient, 'orgId' | 'resources'>,
  asked: string | undefined,
  publicBaseUrl: string,
): string | undefined {
  if (asked === undefined) return undefined;
  if (client.resources.includes(asked) || asked === organizationAudience(publicBaseUrl, client.orgId))
    return asked;
  const listed = client.resources.length
    ? `its resources: ${client.resources.join(' ')}`
    : 'it lists no resources';
  throw new OAuthError(
    'invalid_target',
    `resource ${JSON.stringify(asked)} is not one this client may ask for (${listed}; without resource, the token is for the organization's own audience)`,
  );
}
