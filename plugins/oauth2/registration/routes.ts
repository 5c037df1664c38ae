import { Elysia } from 'elysia';
import { requestContextReader } from '../../../core/http/sign-in-context.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { ORGANIZATION_ISSUER_PATH } from '../../../core/tokens/issuers.ts';
import { errorResponse, invalidMetadata, invalidToken, RegistrationError } from './errors.ts';
import type { createClientConfiguration } from './manage.ts';
import type { Registrar } from './register.ts';
import { jsonResponse, REGISTRATION_CORS } from './response.ts';

const TAGS = ['OAuth2 dynamic registration'];

/** The Bearer token of the request, undefined without an Authorization header. */
function bearerOf(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (header === null) return undefined;
  const m = /^Bearer +([\x21-\x7e]{1,512})$/i.exec(header.trim());
  if (!m) throw invalidToken('the Authorization header must be Bearer <token>');
  return m[1];
}

/** The request's JSON body: RFC 7591 §3.1 requests are application/json. */
async function jsonOf(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch {
    throw invalidMetadata('the request body must be a JSON object of client metadata (application/json)');
  }
}

/** Runs a handler, answering its RegistrationError as RFC 7591's JSON error; others go to the service. */
async function answering(work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof RegistrationError) return errorResponse(e);
    throw e;
  }
}

const json = { 'application/json': { schema: { type: 'object' as const } } };
const errors = {
  400: {
    description:
      'invalid_client_metadata or invalid_redirect_uri: the description names the member and its rule',
    content: json,
  },
  401: {
    description:
      'invalid_token: the token is missing, unknown, expired, used up, revoked or of another organization (or client)',
    content: json,
  },
};
const doc = (
  operationId: string,
  summary: string,
  description: string,
  responses: Record<string, { description: string; content?: typeof json }>,
) => ({
  detail: { operationId, summary, description, tags: TAGS, security: [], responses },
});

const REGISTER_DESCRIPTION =
  'Dynamic Client Registration (RFC 7591): a JSON body of client metadata (redirect_uris, token_endpoint_auth_method, grant_types, response_types, client_name, scope, jwks or jwks_uri, client_uri, logo_uri, policy_uri, tos_uri, contacts, software_id, software_version, post_logout_redirect_uris, backchannel_logout_uri, backchannel_logout_session_required), checked by the rules of POST /oauth2/clients; other members (software_statement among them) are ignored. Defaults: grant_types [authorization_code], token_endpoint_auth_method client_secret_basic (none for open registration), scope openid, client_name "Unnamed application". A registered client is always third-party (a consent page) until an administrator sets first_party. 201: the client information response with client_secret (confidential clients; client_secret_expires_at 0), registration_access_token and registration_client_uri (RFC 7592). Errors are RFC 7591 JSON bodies, never cached.';

/**
 * The registration endpoints (RFC 7591) and the client configuration endpoint (RFC 7592). They answer
 * RFC 7591's JSON, not the service's envelope; the organization comes from the initial access token or
 * from the endpoint's path, never from a header an off-the-shelf client could not send.
 */
export function registrationRoutes(
  ctx: ServiceContext,
  registrar: Registrar,
  configuration: ReturnType<typeof createClientConfiguration>,
) {
  const readContext = requestContextReader(ctx.headers);
  const preflight = (methods: string) => () =>
    new Response(null, {
      status: 204,
      headers: {
        ...REGISTRATION_CORS,
        'access-control-allow-methods': methods,
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '600',
      },
    });
  const preflightDoc = (operationId: string) => ({
    detail: {
      operationId,
      summary: 'CORS preflight',
      description: 'Browser-based clients may register: any origin, no cookie.',
      tags: TAGS,
      security: [],
      responses: { 204: { description: 'Allowed' } },
    },
  });
  const register = (request: Request, orgId?: string) =>
    answering(async () => {
      const token = bearerOf(request);
      const body = await jsonOf(request);
      const clientIp = readContext(request).clientIp;
      const info = await registrar.register({
        json: body,
        ...(orgId !== undefined ? { orgId } : {}),
        ...(token !== undefined ? { token } : {}),
        ...(clientIp !== undefined ? { clientIp } : {}),
      });
      return jsonResponse(201, info);
    });
  const created = {
    201: { description: 'The client information response (RFC 7591 section 3.2.1)', content: json },
  };
  const ORG_REGISTER = `${ORGANIZATION_ISSUER_PATH}/:org/register`;

  return new Elysia()
    .options('/oauth2/register', preflight('POST'), preflightDoc('OptionsOauth2Register'))
    .post('/oauth2/register', ({ request }) => register(request), {
      parse: 'none',
      ...doc(
        'PostOauth2Register',
        'Register a client (RFC 7591) with an initial access token',
        `${REGISTER_DESCRIPTION} Here the Authorization: Bearer initial access token (POST /oauth2/registration-tokens) is required and names the organization; the client's tokens carry the deployment's issuer (organization_issuer false).`,
        { ...created, ...errors },
      ),
    })
    .options(ORG_REGISTER, preflight('POST'), preflightDoc('OptionsOauth2OrganizationsOrgRegister'))
    .post(
      ORG_REGISTER,
      async ({ request, params }) => {
        const orgId = params.org;
        if (!isUuid(orgId) || !(await ctx.orgs.get(orgId)))
          return jsonResponse(404, {
            errors: [{ httpcode: 404, message: 'no such organization here' }],
            error: 'not_found',
            error_description: 'no such organization here',
          });
        return register(request, orgId);
      },
      {
        parse: 'none',
        ...doc(
          'PostOauth2OrganizationsOrgRegister',
          "Register a client (RFC 7591) at an organization's issuer",
          `${REGISTER_DESCRIPTION} The registration endpoint of the organization's own issuer (PUBLIC_BASE_URL/oauth2/organizations/{org}): with an initial access token of this organization (another's is 401 invalid_token), or without one where the organization allows open registration (PUT /oauth2/registration-policy): then only a public client (token_endpoint_auth_method none, PKCE), its scopes those asked for that allowed_scopes lists, within max_open_clients and per_address_per_hour (429 with Retry-After). The client's tokens carry the organization's issuer (organization_issuer true).`,
          {
            ...created,
            ...errors,
            404: { description: 'No such organization', content: json },
            429: {
              description: 'An open registration limit: Retry-After says when to try again',
              content: json,
            },
          },
        ),
      },
    )
    .options(
      '/oauth2/register/:client_id',
      preflight('GET, PUT, DELETE'),
      preflightDoc('OptionsOauth2RegisterClientId'),
    )
    .get(
      '/oauth2/register/:client_id',
      ({ request, params }) =>
        answering(async () =>
          jsonResponse(200, await configuration.read(bearerOf(request), params.client_id)),
        ),
      doc(
        'GetOauth2RegisterClientId',
        'Read a registered client (RFC 7592)',
        "With the client's registration access token: its client information response (without its secret, which is kept only as a digest).",
        { 200: { description: 'The client information response', content: json }, 401: errors[401] },
      ),
    )
    .put(
      '/oauth2/register/:client_id',
      ({ request, params }) =>
        answering(async () => {
          const token = bearerOf(request);
          const body = await jsonOf(request);
          return jsonResponse(200, await configuration.replace(token, params.client_id, body));
        }),
      {
        parse: 'none',
        ...doc(
          'PutOauth2RegisterClientId',
          "Replace a registered client's metadata (RFC 7592)",
          "With the client's registration access token. The body is the client's whole metadata, as at registration, with its client_id (which must be this client's) and, if given, its client_secret (which must be its own); members left out go back to their defaults. Its type (public or confidential), first_party, organization_issuer and resources stay. An open-registered client stays within its organization's allowed_scopes.",
          { 200: { description: 'The client information response', content: json }, ...errors },
        ),
      },
    )
    .delete(
      '/oauth2/register/:client_id',
      ({ request, params }) =>
        answering(async () => {
          await configuration.remove(bearerOf(request), params.client_id);
          return new Response(null, {
            status: 204,
            headers: { ...REGISTRATION_CORS, 'cache-control': 'no-store' },
          });
        }),
      doc(
        'DeleteOauth2RegisterClientId',
        'Delete a registered client (RFC 7592)',
        "With the client's registration access token: the client is deleted as DELETE /oauth2/clients/{id} deletes it, and its registration access token stops working.",
        { 204: { description: 'Deleted' }, 401: errors[401] },
      ),
    );
}
