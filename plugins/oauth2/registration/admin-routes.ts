import { Elysia } from 'elysia';
import * as v from 'valibot';
import { defineErrors } from '../../../core/errors.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import {
  consistencyHeaders,
  errorDoc,
  routeDetail,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import {
  DEFAULT_TOKEN_SECONDS,
  NewRegistrationTokenSchema,
  RegistrationPolicyBody,
  RegistrationPolicySchema,
  RegistrationTokenBody,
  RegistrationTokenIdParams,
  RegistrationTokenSchema,
} from './admin-schema.ts';
import { DEFAULT_REGISTRATION_POLICY, type RegistrationStore } from './store.ts';
import type { RegistrationTokenRow } from './tables.ts';

export const RegistrationErrors = defineErrors({
  REGISTRATION_TOKEN_NOT_FOUND: {
    status: 404,
    message: (id: string) =>
      `no initial access token ${JSON.stringify(id.slice(0, 64))} in this organization`,
  },
});

const TOKENS = '/oauth2/registration-tokens';
const POLICY = '/oauth2/registration-policy';

const present = (row: RegistrationTokenRow) => ({
  id: row.id,
  expires_at: new Date(row.expiresAt).toISOString(),
  uses: row.uses,
  uses_left: row.usesLeft,
  created_at: new Date(row.createdAt).toISOString(),
});

/**
 * What an organization's administrator manages of dynamic registration, with its API key: initial access
 * tokens (issue, list, revoke) and the open registration policy. Another organization's key sees none of
 * them, and its DELETE of one of them is a 404.
 */
export function registrationAdminRoutes(ctx: ServiceContext, store: RegistrationStore) {
  const detail = routeDetail(['OAuth2 dynamic registration']);
  const write = { ...errorResponses, ...writeErrorResponses };
  const policyAnswer = async (orgId: string, policy = DEFAULT_REGISTRATION_POLICY) => ({
    ...policy,
    open_clients: await store.openClients(orgId),
  });
  return new Elysia()
    .use(ctx.auth)
    .post(
      TOKENS,
      async ({ org, body, request, set }) => {
        const { row, token } = await consistentWrite(request, ctx.headers, () =>
          store.issue(org.id, {
            expiresInSeconds: body.expires_in ?? DEFAULT_TOKEN_SECONDS,
            uses: body.uses ?? 1,
          }),
        );
        set.status = 201;
        set.headers['cache-control'] = 'no-store';
        return ok({ ...present(row), token });
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        parse: 'json',
        transform: refuseArrayBody,
        body: RegistrationTokenBody,
        response: { 201: resultOf(NewRegistrationTokenSchema), ...write },
        detail: detail(
          'PostOauth2RegistrationTokens',
          'Issue an initial access token',
          "A token for dynamic client registration (RFC 7591) in this organization, at PUBLIC_BASE_URL/oauth2/register or the organization's own registration endpoint: good for `uses` registrations (default 1, at most 1000) until `expires_in` seconds have passed (default a day, at most 30 days). Shown in this response only. A client registered with it may be confidential, and is a third-party client (consent page) until an administrator sets first_party.",
        ),
      },
    )
    .get(TOKENS, async ({ org }) => ok((await store.list(org.id)).map(present)), {
      apiKey: true,
      response: { 200: resultOf(v.array(RegistrationTokenSchema)), ...errorResponses },
      detail: detail(
        'GetOauth2RegistrationTokens',
        "List the organization's initial access tokens",
        'Oldest first, expired and used up ones included; the tokens themselves are never shown again.',
      ),
    })
    .delete(
      `${TOKENS}/:token_id`,
      async ({ org, params, request, set }) => {
        const id = params.token_id;
        const gone =
          isUuid(id) && (await consistentWrite(request, ctx.headers, () => store.revoke(org.id, id)));
        if (!gone) throw RegistrationErrors.REGISTRATION_TOKEN_NOT_FOUND(id);
        set.status = 204;
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        params: RegistrationTokenIdParams,
        detail: {
          ...detail(
            'DeleteOauth2RegistrationTokensTokenId',
            'Revoke an initial access token',
            'It registers no client from then on; the clients it registered stay.',
          ),
          responses: {
            204: { description: 'Revoked' },
            404: errorDoc('No such token in this organization'),
            ...writeErrorDocs,
          },
        },
      },
    )
    .get(POLICY, async ({ org }) => ok(await policyAnswer(org.id, await store.policy(org.id))), {
      apiKey: true,
      response: { 200: resultOf(RegistrationPolicySchema), ...errorResponses },
      detail: detail(
        'GetOauth2RegistrationPolicy',
        "The organization's open registration policy",
        'Whether open registration is on, its limits and allowed scopes, and how many clients it has made.',
      ),
    })
    .put(
      POLICY,
      async ({ org, body, request }) => {
        const policy = {
          open_registration: body.open_registration ?? DEFAULT_REGISTRATION_POLICY.open_registration,
          max_open_clients: body.max_open_clients ?? DEFAULT_REGISTRATION_POLICY.max_open_clients,
          per_address_per_hour: body.per_address_per_hour ?? DEFAULT_REGISTRATION_POLICY.per_address_per_hour,
          allowed_scopes: [...new Set(body.allowed_scopes ?? DEFAULT_REGISTRATION_POLICY.allowed_scopes)],
        };
        await consistentWrite(request, ctx.headers, () => store.setPolicy(org.id, policy));
        return ok(await policyAnswer(org.id, policy));
      },
      {
        apiKey: true,
        headers: consistencyHeaders(ctx.headers),
        parse: 'json',
        transform: refuseArrayBody,
        body: RegistrationPolicyBody,
        response: { 200: resultOf(RegistrationPolicySchema), ...write },
        detail: detail(
          'PutOauth2RegistrationPolicy',
          "Set the organization's open registration policy",
          "Open registration lets anybody register a client at the organization's registration endpoint (PUBLIC_BASE_URL/oauth2/organizations/<organization ID>/register) without an initial access token, as MCP clients do: only public clients (token_endpoint_auth_method none, PKCE) without client_credentials or token exchange, always third-party (consent page), with scopes from allowed_scopes, at most max_open_clients of them and per_address_per_hour registrations per client address (429 with Retry-After past either). A member left out takes its default; lowering max_open_clients removes no client.",
        ),
      },
    );
}
