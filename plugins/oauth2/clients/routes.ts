import { Elysia } from 'elysia';
import * as v from 'valibot';
import { CoreErrors } from '../../../core/errors.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import {
  ClientCreateSchema,
  ClientIdParams,
  ClientPatchSchema,
  ClientSchema,
  ClientWithSecretSchema,
  SecretSchema,
} from '../schema.ts';
import type { ClientStore } from '../store/clients.ts';
import { createClient, patchClient } from './admin.ts';
import type { ClientCache, LifetimeDefaults } from './cache.ts';
import { toClientResponse } from './to-response.ts';

const TAGS = ['OAuth2'];

/** Runs before validation: a body that is not a JSON object is one error, not one per member. */
function refuseNonObject({ body }: { body: unknown }): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw CoreErrors.VALIDATION('body: must be a JSON object');
}
const PATH = '/oauth2/clients';
const security = [{ orgId: [], apiKey: [] }];

/**
 * The organization's OAuth 2.0 clients: create, list, get, modify, delete, new secret. Organization API
 * key auth; another organization's client is a 404. A change here is seen by this replica's token
 * endpoint at once (its cache entry is dropped), by other replicas within the cache's 5 s.
 */
export function clientRoutes(
  ctx: ServiceContext,
  store: ClientStore,
  cache: ClientCache,
  defaults: LifetimeDefaults,
) {
  const present = (row: Parameters<typeof toClientResponse>[0]) =>
    toClientResponse(row, defaults, ctx.config.publicBaseUrl);
  const rules = { publicBaseUrl: ctx.config.publicBaseUrl };
  const write = { ...errorResponses, ...writeErrorResponses };
  const newSecret = async ({
    org,
    params,
    request,
  }: {
    org: { id: string };
    params: { oauth_client_id: string };
    request: Request;
  }) => {
    const row = await store.get(org.id, params.oauth_client_id);
    const secret = await consistentWrite(request, ctx.headers, () => store.newSecret(row));
    cache.forget(row.clientId);
    return ok({ client_secret: secret });
  };
  const secretDoc = (operationId: string) => ({
    apiKey: true as const,
    headers: consistencyHeaders(ctx.headers),
    params: ClientIdParams,
    parse: 'none' as const,
    response: { 200: resultOf(SecretSchema), ...write },
    detail: {
      operationId,
      summary: 'Generate a new client secret',
      description:
        'A new secret (256 random bits) is answered once; the previous secret stops working at once on this replica and within 5 s on the others. Public and private_key_jwt clients have none: 400. A client_secret_jwt client keeps the new one sealed, as the key of its assertions.',
      tags: TAGS,
      security,
    },
  });

  return new Elysia()
    .use(ctx.auth)
    .post(
      PATH,
      async ({ org, body, request, set }) => {
        const { row, secret } = await consistentWrite(request, ctx.headers, () =>
          createClient(store, org.id, body, rules),
        );
        set.status = 201;
        return ok({ ...present(row), ...(secret !== undefined ? { client_secret: secret } : {}) });
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        parse: 'json',
        transform: refuseNonObject,
        body: ClientCreateSchema,
        response: { 201: resultOf(ClientWithSecretSchema), ...write },
        detail: {
          operationId: 'PostOauth2Clients',
          summary: 'Create an OAuth 2.0 client',
          description:
            "A confidential client (the default) gets a client_secret, shown in this response only: only its SHA-256 digest is kept. A public client (public: true) has none and must use PKCE. Rules: a public client cannot have client_credentials; authorization_code needs a redirect URI; refresh_token needs authorization_code; no resource under this service's public base URL. Sign-in sessions and logout (OpenID registration names): post_logout_redirect_uris (checked as redirect_uris are; default []), backchannel_logout_uri (an https URL, http on a loopback host, no fragment; default none), backchannel_logout_session_required (default false), first_party (default true: no consent page; false: a third-party app shown a consent page). organization_issuer (default false): its tokens carry its organization's own issuer, PUBLIC_BASE_URL/oauth2/organizations/<organization ID>, instead of the deployment's. RFC 7591 names: token_endpoint_auth_method (none is a public client; private_key_jwt needs jwks or jwks_uri and gets no secret; client_secret_jwt keeps its secret sealed, as the HMAC key of its assertions), scope (a space-delimited alias of scopes), jwks (public keys only), jwks_uri, client_uri, logo_uri, policy_uri, tos_uri (https), contacts, software_id, software_version; RFC 9449: dpop_bound_access_tokens (default false; true: every token request of the client must carry a DPoP proof).",
          tags: TAGS,
          security,
        },
      },
    )
    .get(PATH, async ({ org }) => ok((await store.list(org.id)).map(present)), {
      apiKey: true,
      response: { 200: resultOf(v.array(ClientSchema)), ...errorResponses },
      detail: {
        operationId: 'GetOauth2Clients',
        summary: "List the organization's OAuth 2.0 clients",
        description: 'In creation order. Secrets are never shown.',
        tags: TAGS,
        security,
      },
    })
    .get(
      `${PATH}/:oauth_client_id`,
      async ({ org, params }) => ok(present(await store.get(org.id, params.oauth_client_id))),
      {
        apiKey: true,
        params: ClientIdParams,
        response: { 200: resultOf(ClientSchema), ...errorResponses },
        detail: {
          operationId: 'GetOauth2ClientsOauthClientId',
          summary: 'Get an OAuth 2.0 client',
          description: "Another organization's client is a 404. The secret is never shown.",
          tags: TAGS,
          security,
        },
      },
    )
    .patch(
      `${PATH}/:oauth_client_id`,
      async ({ org, params, body, request }) => {
        const row = await store.get(org.id, params.oauth_client_id);
        const updated = await consistentWrite(request, ctx.headers, () =>
          patchClient(store, row, body, rules),
        );
        cache.forget(row.clientId);
        return ok(present(updated));
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        params: ClientIdParams,
        parse: 'json',
        transform: refuseNonObject,
        body: ClientPatchSchema,
        response: { 200: resultOf(ClientSchema), ...write },
        detail: {
          operationId: 'PatchOauth2ClientsOauthClientId',
          summary: 'Modify an OAuth 2.0 client',
          description:
            'Members left out are kept; a null duration returns to the deployment default, a null backchannel_logout_uri, jwks, jwks_uri, client_uri, logo_uri, policy_uri, tos_uri, software_id or software_version removes it. public cannot change, nor can token_endpoint_auth_method become client_secret_jwt (chosen at creation). The rules of create apply to the result.',
          tags: TAGS,
          security,
        },
      },
    )
    .delete(
      `${PATH}/:oauth_client_id`,
      async ({ org, params, request, set }) => {
        await consistentWrite(request, ctx.headers, () => store.remove(org.id, params.oauth_client_id));
        cache.forget(params.oauth_client_id);
        set.status = 204;
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        params: ClientIdParams,
        detail: {
          operationId: 'DeleteOauth2ClientsOauthClientId',
          summary: 'Delete an OAuth 2.0 client',
          description:
            'Its access tokens stop being active for introspection at once; as JWTs they still verify until they expire.',
          tags: TAGS,
          security,
          responses: {
            204: { description: 'Deleted' },
            404: errorDoc('No such client in this organization'),
            ...writeErrorDocs,
          },
        },
      },
    )
    .post(`${PATH}/:oauth_client_id/secret`, newSecret, secretDoc('PostOauth2ClientsOauthClientIdSecret'))
    .put(`${PATH}/:oauth_client_id/secret`, newSecret, secretDoc('PutOauth2ClientsOauthClientIdSecret'));
}
