import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { InvalidReason, TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { authenticationPolicies } from '../../../core/factors/policy.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, resultOf, writeErrorResponses } from '../../../core/http/envelope.ts';
import { optionalJson, refuseArrayBody } from '../../../core/http/object-body.ts';
import {
  API_KEY_SECURITY,
  consistencyHeaders,
  errorDocs,
  writeErrorDocs,
} from '../../../core/http/openapi-docs.ts';
import { analyticsReader } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { TokenErrors } from '../errors.ts';
import { lacksFactors } from '../validation/factors.ts';

const TAGS = ['Tokens'];
const SECURITY = API_KEY_SECURITY;

const TokenBody = v.object({
  token: v.pipe(
    v.string('token must be a string: a compact JWT'),
    v.description('An identity token (a JWT).'),
  ),
});

const MintBody = v.nullish(
  v.object({
    custom_claims: v.optional(
      v.pipe(
        // Not valibot's record: it takes an array as an object of index keys, and drops `__proto__`.
        v.custom<Record<string, JsonValue>>(
          (c) => typeof c === 'object' && c !== null && !Array.isArray(c),
          'custom_claims must be a JSON object of claims',
        ),
        v.description('Claims added to the token. Registered and reserved claims are refused with 400.'),
      ),
    ),
  }),
);

/** Why a token is not valid, in the reference's words (docs/spec/reference/tokens.openapi.yml, ValidateTokenResponse). */
const REFERENCE_REASONS = [
  'invalid_token_content',
  'expired',
  'invalid_issuer',
  'not_enough_factors',
  'person_not_active',
] as const;
type ReferenceReason = (typeof REFERENCE_REASONS)[number];

/** The finer reason, in invalidity_detail: the validator's, or what became of the token's person. */
type Detail = InvalidReason | 'person_inactive' | 'person_deleted' | 'not_enough_factors';

const REFERENCE_REASON_OF: Record<Detail, ReferenceReason> = {
  malformed: 'invalid_token_content',
  bad_signature: 'invalid_token_content',
  unknown_key: 'invalid_token_content',
  revoked: 'invalid_token_content',
  wrong_organization: 'invalid_token_content',
  wrong_token_type: 'invalid_token_content',
  expired: 'expired',
  wrong_issuer: 'invalid_issuer',
  person_inactive: 'person_not_active',
  person_deleted: 'person_not_active',
  not_enough_factors: 'not_enough_factors',
};

const invalid = (detail: Detail) => ({
  valid: false,
  invalidity_reason: REFERENCE_REASON_OF[detail],
  invalidity_detail: detail,
});

const ValidateResult = v.object({
  valid: v.boolean(),
  invalidity_reason: v.optional(v.picklist(REFERENCE_REASONS)),
  invalidity_detail: v.optional(v.picklist(Object.keys(REFERENCE_REASON_OF) as Detail[])),
  expires_in_seconds: v.optional(v.number()),
  expires_at: v.optional(v.string()),
});

/** POST /persons/{person_id}/mint-token, POST /token/validate and POST /token/revoke. */
export function tokenRoutes(ctx: ServiceContext, issuer: TokenIssuer, persons: PersonDirectory) {
  const names = ctx.headers;
  const analyticsOf = analyticsReader(names);
  return new Elysia()
    .use(ctx.auth)
    .post(
      '/persons/:person_id/mint-token',
      async ({ org, params, body, request, set }) => {
        const customClaims = body?.custom_claims ?? {};
        const issued = await consistentWrite(request, names, () =>
          issuer.issue({
            orgId: org.id,
            personId: params.person_id,
            methods: ['api'],
            issuer: 'mint',
            authentications: [],
            customClaims,
            request: analyticsOf(request),
          }),
        );
        set.status = 201;
        return ok(issued.token);
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        parse: optionalJson,
        transform: refuseArrayBody,
        body: MintBody,
        response: { 201: resultOf(v.string()), ...errorResponses, ...writeErrorResponses },
        detail: {
          operationId: 'PostPersonsPersonIdMintToken',
          summary: 'Mint a token for a person',
          description:
            'Signs an identity token for the person with authenticated_methods ["api"] and the custom claims given. Registered claims (iss sub aud exp nbf iat jti) and reserved ones (oid, person_id, first_token, authenticated_methods, groups, ...) are refused with 400 naming the claim. Does not run the token_minted hook. Emits TokenMinted_v1 with mint_token_api true. 404 for a person this organization does not have.',
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .post(
      '/token/validate',
      async ({ org, body }) => {
        const checked = await issuer.validate(body.token, org.id);
        if (!checked.valid) return ok(invalid(checked.reason));
        // A genuine token stops being valid when its person is deactivated or deleted.
        const personId = checked.claims.person_id;
        if (typeof personId === 'string') {
          const person = await persons.get(org.id, personId);
          if (!person) return ok(invalid('person_deleted'));
          if (!person.active) return ok(invalid('person_inactive'));
        }
        // A token the organization's policy would not issue now (a second factor became required).
        const policies = ctx.capability(authenticationPolicies);
        if (policies && (await lacksFactors(policies, org.id, checked.claims)))
          return ok(invalid('not_enough_factors'));
        const exp = checked.claims.exp as number;
        return ok({
          valid: true,
          expires_in_seconds: Math.max(0, exp - Math.floor(ctx.clock.now() / 1000)),
          expires_at: new Date(exp * 1000).toISOString(),
        });
      },
      {
        apiKey: true,
        parse: 'json',
        body: TokenBody,
        response: { 200: resultOf(ValidateResult), ...errorResponses },
        detail: {
          operationId: 'PostTokenValidate',
          summary: 'Validate an identity token',
          description:
            "Whether the token is valid for this organization now. If not, invalidity_reason says why in the reference's terms (invalid_token_content, expired, invalid_issuer, person_not_active, not_enough_factors) and invalidity_detail more finely: malformed, bad_signature, unknown_key, revoked, wrong_organization (a genuine token of another organization) or wrong_token_type (an OAuth access token or an OpenID Connect ID token, signed by the same keys: only identity tokens validate here) for invalid_token_content, expired, wrong_issuer for invalid_issuer, person_inactive or person_deleted for person_not_active. not_enough_factors: the organization's authentication policy now requires a second factor and the token's authenticated_methods name fewer than two (a token minted through the API, or an anonymous person's, is not judged by the policy).",
          tags: TAGS,
          security: SECURITY,
        },
      },
    )
    .post(
      '/token/revoke',
      async ({ org, body, request, set }) => {
        const checked = await issuer.validate(body.token, org.id);
        if (checked.valid) {
          const { jti, exp, person_id } = checked.claims;
          // validate answers valid only for a token whose jti is a string and exp a number.
          if (typeof jti !== 'string' || typeof exp !== 'number')
            throw TokenErrors.INVALID_TOKEN('token: not a valid token of this organization (malformed)');
          await consistentWrite(request, names, () =>
            issuer.revoke({
              orgId: org.id,
              tokenId: jti,
              expiresAt: exp,
              ...(typeof person_id === 'string' ? { personId: person_id } : {}),
              reason: 'api',
            }),
          );
        } else if (checked.reason !== 'revoked' && checked.reason !== 'expired') {
          // Revoking twice, or a token that expired anyway, changes nothing: 204 as for the first time.
          throw TokenErrors.INVALID_TOKEN(
            `token: not a valid token of this organization (${checked.reason})`,
          );
        }
        set.status = 204;
        return undefined;
      },
      {
        apiKey: true,
        headers: consistencyHeaders(names),
        parse: 'json',
        body: TokenBody,
        detail: {
          operationId: 'PostTokenRevoke',
          summary: 'Revoke an identity token',
          description:
            'Revokes the token until it expires: POST /token/validate then answers revoked. 204 also for a token already revoked or expired; 400 for one that is not a genuine token of this organization.',
          tags: TAGS,
          security: SECURITY,
          // Here rather than a `response` map, which would replace this 204 in the document.
          responses: {
            204: { description: 'Revoked (or revoked or expired already)' },
            ...errorDocs,
            ...writeErrorDocs,
          },
        },
      },
    );
}
