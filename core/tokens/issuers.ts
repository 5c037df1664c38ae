/**
 * The issuers of a deployment. The deployment's own (PUBLIC_BASE_URL) is every organization's, as it
 * always was; each organization also has one of its own, `{PUBLIC_BASE_URL}/oauth2/organizations/{oid}`,
 * whose metadata (RFC 8414 path insertion) names that organization's registration endpoint, so a client
 * that only knows an issuer URL (an MCP client) can register without any header. A client is bound to
 * one of the two (its `organization_issuer`): its tokens carry that `iss`, its authorization responses
 * that `iss` parameter (RFC 9207). See docs/architecture.md, "Issuers".
 *
 * @example
 * organizationIssuer('https://id.example.com', '0197…') // 'https://id.example.com/oauth2/organizations/0197…'
 */
export const organizationIssuer = (publicBaseUrl: string, orgId: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/oauth2/organizations/${orgId}`;

/** The path under PUBLIC_BASE_URL of every organization's issuer, before the organization's ID. */
export const ORGANIZATION_ISSUER_PATH = '/oauth2/organizations';

/**
 * Whether `iss` is an issuer of the organization `orgId` on this deployment: the deployment's own or
 * the organization's. A token of another organization's issuer is not.
 */
export const isIssuerOf = (iss: unknown, publicBaseUrl: string, orgId: string): boolean =>
  iss === publicBaseUrl.replace(/\/+$/, '') || iss === organizationIssuer(publicBaseUrl, orgId);
