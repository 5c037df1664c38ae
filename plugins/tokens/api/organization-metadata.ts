import { Elysia } from 'elysia';
import { isUuid } from '../../../core/ids.ts';
import type { OrganizationStore } from '../../../core/organizations/store.ts';
import { ORGANIZATION_ISSUER_PATH, organizationIssuer } from '../../../core/tokens/issuers.ts';
import { discoveryDocument } from './well-known.ts';

const TAGS = ['OIDC discovery'];

/**
 * The metadata of an organization's own issuer (core/tokens/issuers.ts): the deployment's document with
 * that issuer and the organization's registration endpoint, where a client registers into this
 * organization without any header. Every other endpoint is the deployment's: they find the organization
 * from the client.
 */
export function organizationDiscoveryDocument(base: string, orgId: string) {
  const issuer = organizationIssuer(base, orgId);
  return { ...discoveryDocument(base), issuer, registration_endpoint: `${issuer}/register` };
}

const notFound = (orgId: string) => {
  const message = `no organization ${orgId.slice(0, 64)} here`;
  return new Response(
    // The service's envelope, and RFC 6749's members for OAuth clients reading it.
    JSON.stringify({ errors: [{ httpcode: 404, message }], error: 'not_found', error_description: message }),
    { status: 404, headers: { 'content-type': 'application/json', 'access-control-allow-origin': '*' } },
  );
};

/**
 * The organization issuer's metadata at the URLs clients build from it: RFC 8414 §3.1's path insertion
 * (`/.well-known/oauth-authorization-server/oauth2/organizations/{oid}`, and the same for
 * openid-configuration, which some clients insert too) and OpenID Connect Discovery's appended form
 * (`/oauth2/organizations/{oid}/.well-known/openid-configuration`). An unknown organization is a 404.
 */
export function organizationMetadataRoutes(base: string, orgs: OrganizationStore, maxAgeSeconds: number) {
  const answer = async ({ params }: { params: { org: string } }) => {
    const orgId = params.org;
    if (!isUuid(orgId) || !(await orgs.get(orgId))) return notFound(orgId);
    return new Response(JSON.stringify(organizationDiscoveryDocument(base, orgId)), {
      headers: {
        'content-type': 'application/json',
        'cache-control': `public, max-age=${maxAgeSeconds}`,
        'access-control-allow-origin': '*',
      },
    });
  };
  const detail = (operationId: string, summary: string) => ({
    detail: {
      operationId,
      summary,
      description:
        "The metadata of the organization's own issuer, PUBLIC_BASE_URL/oauth2/organizations/{org}: the deployment's document with that issuer and the organization's registration_endpoint (dynamic registration without any header). Public. 404 for an unknown organization.",
      tags: TAGS,
      security: [],
      responses: {
        200: {
          description: 'The metadata, with Cache-Control',
          content: { 'application/json': { schema: { type: 'object' as const } } },
        },
        404: { description: 'No such organization' },
      },
    },
  });
  const root = ORGANIZATION_ISSUER_PATH;
  return new Elysia()
    .get(
      `/.well-known/oauth-authorization-server${root}/:org`,
      answer,
      detail('GetOrganizationAuthorizationServerMetadata', "An organization issuer's OAuth 2.0 metadata"),
    )
    .get(
      `/.well-known/openid-configuration${root}/:org`,
      answer,
      detail('GetOrganizationOpenidConfigurationInserted', "An organization issuer's OpenID configuration"),
    )
    .get(
      `${root}/:org/.well-known/openid-configuration`,
      answer,
      detail('GetOrganizationOpenidConfiguration', "An organization issuer's OpenID configuration"),
    )
    .get(
      `${root}/:org/.well-known/oauth-authorization-server`,
      answer,
      detail(
        'GetOrganizationAuthorizationServerMetadataAppended',
        "An organization issuer's OAuth 2.0 metadata",
      ),
    );
}
