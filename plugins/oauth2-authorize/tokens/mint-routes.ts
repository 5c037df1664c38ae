import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../../core/http/consistency.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders } from '../../../core/http/openapi-docs.ts';
import { analyticsReader } from '../../../core/http/sign-in-context.ts';
import { uuidString } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { Mint } from './mint.ts';

const MintBody = v.object({
  person_id: v.pipe(uuidString('must be a UUID'), v.description('The person the tokens are for.')),
  client_id: v.pipe(
    v.string('must be a string'),
    v.minLength(1, 'must not be empty'),
    v.maxLength(256, 'must be at most 256 characters'),
    v.description('A client of this organization: the tokens are issued to it.'),
  ),
  scopes: v.optional(
    v.pipe(
      v.array(v.string('must be a string'), 'must be an array of strings'),
      v.maxLength(100, 'must list at most 100 scopes'),
      v.description(
        "Each among the client's scopes; repeats are dropped. openid adds an ID token, offline_access a refresh token. Absent: none.",
      ),
    ),
  ),
  resource: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.minLength(1, 'must not be empty'),
      v.maxLength(2000, 'must be at most 2000 characters'),
      v.description(
        "The access token's resource (RFC 8707), its aud: one of the client's resources (400 otherwise). Absent: the organization's own audience, PUBLIC_BASE_URL/organizations/<organization ID>. Refresh tokens keep it.",
      ),
    ),
  ),
  custom_claims: v.optional(
    v.pipe(
      // Not valibot's record: it takes an array as an object of index keys, and drops `__proto__`.
      v.custom<Record<string, JsonValue>>(
        (c) => typeof c === 'object' && c !== null && !Array.isArray(c),
        'custom_claims must be a JSON object of claims',
      ),
      v.description(
        'Claims added to the access token and the ID token. Reserved claims are refused with 400.',
      ),
    ),
  ),
});

const Minted = v.object({
  access_token: v.string(),
  id_token: v.optional(v.string()),
  refresh_token: v.optional(v.string()),
});

/** POST /oauth2/tokens/mint: organization API key auth, JSON body, the reference's PostOauth2TokensMint. */
export function mintRoutes(ctx: ServiceContext, mint: Mint) {
  // The caller as events see it (TokenMinted_v1's analytics_metadata).
  const analyticsOf = analyticsReader(ctx.headers);
  return new Elysia().use(ctx.auth).post(
    '/oauth2/tokens/mint',
    async ({ org, body, request, set }) => {
      const minted = await consistentWrite(request, ctx.headers, () =>
        mint({
          orgId: org.id,
          personId: body.person_id.toLowerCase(),
          clientId: body.client_id,
          ...(body.scopes ? { scopes: body.scopes } : {}),
          ...(body.resource !== undefined ? { resource: body.resource } : {}),
          ...(body.custom_claims ? { customClaims: body.custom_claims } : {}),
          request: analyticsOf(request),
        }),
      );
      set.headers['cache-control'] = 'no-store';
      return ok(minted);
    },
    {
      apiKey: true,
      headers: consistencyHeaders(ctx.headers),
      parse: 'json',
      transform: refuseArrayBody,
      body: MintBody,
      response: {
        200: resultOf(Minted),
        ...errorResponses,
        409: ErrorEnvelopeSchema,
        ...writeErrorResponses,
      },
      detail: {
        operationId: 'PostOauth2TokensMint',
        summary: 'Mint OAuth 2.0 & OIDC tokens',
        description:
          "Tokens for a person and a client of this organization, without a login; a new grant (token family) is begun, which revoke, revoke-all and a password reset reach. The access token is signed as the token endpoint signs them (RFC 9068, ES256), with authenticated_methods [\"api\"] and the custom claims in its payload. scopes: each among the client's (400 otherwise), absent means none; openid adds an ID token (through the token issuer as mint-token: no token_minted hook, first_token false, TokenMinted_v1 with mint_token_api true, with the custom claims); offline_access adds a refresh token, and is refused with 400 when the client may not use the refresh_token grant. custom_claims may not set a registered or reserved claim (iss sub aud exp nbf iat jti, oid, person_id, first_token, authenticated_methods, groups, roles, sid, ..., the organization's groups claim, an ID or access token's own claims such as client_id, scope, auth_time, nonce): 400 naming it. 404 for a client or person this organization does not have; 400 for a disabled person; 409 when revoke-all or a password reset revoked the new grant while it was minted (no token is answered: mint again).",
        tags: ['OAuth2'],
        security: [{ orgId: [], apiKey: [] }],
      },
    },
  );
}
