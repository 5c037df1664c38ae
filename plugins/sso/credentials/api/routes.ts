import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../../core/http/object-body.ts';
import { consistencyHeaders, errorDoc } from '../../../../core/http/openapi-docs.ts';
import { NoQuery } from '../../../../core/http/validation.ts';
import type { ServiceContext } from '../../../../core/plugin.ts';
import type { SsoProvider } from '../../../../core/sso/define-provider.ts';
import { SsoErrors } from '../../errors.ts';
import {
  ClientIdParams,
  CredentialCreateSchema,
  CredentialPatchSchema,
  CredentialSchema,
  ListQuery,
} from '../../schema.ts';
import { checkOptions } from '../options.ts';
import type { CredentialStore } from '../store.ts';
import { resolveAliases } from './aliases.ts';
import { toCredentialResponse } from './to-response.ts';

const TAG = 'Organization SSO config';
const PATH = '/organizations/sso/oidc/provider-credentials';
const security = [{ orgId: [], apiKey: [] }];

/** Create, list, get, modify and delete OIDC provider credentials (reference organization-sso-config). */
export function credentialRoutes(
  ctx: ServiceContext,
  store: CredentialStore,
  providers: Map<string, SsoProvider>,
) {
  const ids = [...providers.keys()];
  const requireProvider = (field: string, id: string) => {
    const provider = providers.get(id);
    if (!provider) throw SsoErrors.UNKNOWN_PROVIDER(field, id, ids);
    return provider;
  };
  const respond = (row: Parameters<typeof toCredentialResponse>[0]) =>
    toCredentialResponse(row, providers.get(row.provider), ctx.config.publicBaseUrl);
  const write = { ...errorResponses, ...writeErrorResponses, 409: errorResponses[400] };

  return new Elysia()
    .use(ctx.auth)
    .post(
      PATH,
      async ({ org, body, request, set }) => {
        const provider = requireProvider('body.provider', body.provider);
        const options = (await checkOptions(provider, ids, body.options))!;
        const { externalCredId, enableInAuthzServer } = resolveAliases(body);
        const row = await consistentWrite(request, ctx.headers, () =>
          store.create(org.id, {
            clientId: body.client_id,
            provider: provider.id,
            clientSecret: body.client_secret,
            options,
            ...(body.label !== undefined ? { label: body.label } : {}),
            ...(externalCredId !== undefined ? { externalCredId } : {}),
            ...(enableInAuthzServer !== undefined ? { enableInAuthzServer } : {}),
          }),
        );
        set.status = 201;
        return ok(respond(row));
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(ctx.headers),
        parse: 'json',
        transform: refuseArrayBody,
        body: CredentialCreateSchema,
        response: { 201: resultOf(CredentialSchema), ...write },
        detail: {
          operationId: 'PostOrganizationsSsoOidcProviderCredentials',
          summary: 'Create a set of OIDC provider credentials for SSO',
          description: `provider: one registered in this deployment (${ids.join(', ')}). client_secret and write-only options (apple.private_key) are sealed at rest and never returned. A client_id the organization already has: 409. options holds only the provider's own object; options of another provider are a 400 naming them.`,
          tags: [TAG],
          security,
        },
      },
    )
    .get(
      PATH,
      async ({ org, query }) => {
        if (query.oauth_provider !== undefined) requireProvider('query.oauth_provider', query.oauth_provider);
        return ok((await store.list(org.id, query.oauth_provider)).map(respond));
      },
      {
        apiKey: true,
        query: ListQuery,
        response: { 200: resultOf(v.array(CredentialSchema)), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsSsoOidcProviderCredentials',
          summary: 'List OIDC provider credentials for SSO',
          description: 'oauth_provider narrows the list to one provider.',
          tags: [TAG],
          security,
        },
      },
    )
    .get(
      `${PATH}/:oauth_client_id`,
      async ({ org, params }) => ok(respond(await store.get(org.id, params.oauth_client_id))),
      {
        apiKey: true,
        query: NoQuery,
        params: ClientIdParams,
        response: { 200: resultOf(CredentialSchema), ...errorResponses },
        detail: {
          operationId: 'GetOrganizationsSsoOidcProviderCredentialsOauthClientId',
          summary: 'Get a set of OIDC provider credentials for SSO',
          description:
            'effective_scopes: what a sign-in requests. The client secret and write-only options are never shown.',
          tags: [TAG],
          security,
        },
      },
    )
    .patch(
      `${PATH}/:oauth_client_id`,
      async ({ org, params, body, request }) => {
        const { externalCredId, enableInAuthzServer } = resolveAliases(body);
        const row = await store.get(org.id, params.oauth_client_id);
        const provider = requireProvider('provider', row.provider);
        const options =
          body.options === undefined
            ? undefined
            : await checkOptions(provider, ids, body.options, await store.storedOptions(row));
        const updated = await consistentWrite(request, ctx.headers, () =>
          store.update(row, {
            ...(body.client_secret !== undefined ? { clientSecret: body.client_secret } : {}),
            ...(body.label !== undefined ? { label: body.label } : {}),
            ...(externalCredId !== undefined ? { externalCredId } : {}),
            ...(enableInAuthzServer !== undefined ? { enableInAuthzServer } : {}),
            ...(options ? { options } : {}),
          }),
        );
        return ok(respond(updated));
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(ctx.headers),
        params: ClientIdParams,
        parse: 'json',
        transform: refuseArrayBody,
        body: CredentialPatchSchema,
        response: { 200: resultOf(CredentialSchema), ...write },
        detail: {
          operationId: 'PatchOrganizationsSsoOidcProviderCredentialsOauthClientId',
          summary: 'Modify a set of OIDC provider credentials for SSO',
          description:
            "Members left out are kept. options.<provider> replaces the provider's options (authorize_scopes left out: the defaults), except write-only options left out (apple.private_key), which are kept.",
          tags: [TAG],
          security,
        },
      },
    )
    .delete(
      `${PATH}/:oauth_client_id`,
      async ({ org, params, request }) => {
        await consistentWrite(request, ctx.headers, () => store.remove(org.id, params.oauth_client_id));
        return {};
      },
      {
        apiKey: true,
        query: NoQuery,
        headers: consistencyHeaders(ctx.headers),
        params: ClientIdParams,
        detail: {
          operationId: 'DeleteOrganizationsSsoOidcProviderCredentialsOauthClientId',
          summary: 'Delete a set of OIDC provider credentials for SSO',
          tags: [TAG],
          security,
          responses: {
            200: { description: 'Deleted: the envelope {}' },
            404: errorDoc('No such credential in this organization'),
          },
        },
      },
    );
}
