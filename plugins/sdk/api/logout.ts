import { Elysia } from 'elysia';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { CoreErrors } from '../../../core/errors.ts';
import { eventDefinition } from '../../../core/events/catalogue/index.ts';
import { buildSubmitted, readIngestBody } from '../../../core/events/ingest.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { logoutBodyDoc } from '../schema.ts';
import type { Cors } from './cors.ts';
import { tooMany } from './ingest-routes.ts';
import { withRequestMetadata } from './members.ts';
import { bearerOf, type PersonTokens, unauthorized } from './person-token.ts';

const LOGGED_OUT = eventDefinition('PersonLoggedOut_v1')!;
/** What a logout body may give: the person comes from the token. */
const LOGOUT_MEMBERS = new Set(['analytics_metadata', 'browser_metadata']);

export interface LogoutDeps {
  cors: Cors;
  tokens: PersonTokens;
  issuer: TokenIssuer;
  readContext: (request: Request) => RequestContext;
  perAddress: TokenBuckets;
  rate: { perMinute: number; burst: number };
}

/** The optional body's members, checked: an object with analytics_metadata and browser_metadata at most. */
function logoutMembers(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw CoreErrors.VALIDATION(
      'body: must be a JSON object {analytics_metadata?, browser_metadata?}, or empty',
    );
  const other = Object.keys(body).find((k) => !LOGOUT_MEMBERS.has(k));
  if (other !== undefined)
    throw CoreErrors.VALIDATION(
      `body.${other}: unknown member; a logout takes analytics_metadata and browser_metadata (the person is the token's)`,
    );
  return { ...body };
}

/**
 * POST /logout: the person's own call with its token, which it revokes, emitting PersonLoggedOut_v1 in
 * the same transaction. A token already revoked or expired answers 204 as well and emits nothing: the
 * person is logged out either way, and only the call that revokes a token reports it.
 */
export function logoutRoutes(ctx: ServiceContext, deps: LogoutDeps) {
  const { cors, tokens, issuer, readContext, perAddress, rate } = deps;
  return new Elysia().use(ctx.auth).post(
    '/logout',
    async ({ org, request, set }) => {
      await cors.check(request, org.id, set);
      const rc = readContext(request);
      if (rc.clientIp) {
        const take = await perAddress.take(`${org.id}|${addressBucket(rc.clientIp)}`);
        if (!take.ok) throw tooMany(take.retryAfterSeconds, rate);
      }
      const members = logoutMembers(await readIngestBody(request, 8192, { optional: true }));
      const token = bearerOf(request);
      if (token === undefined)
        throw unauthorized(
          "logout needs the person's token: send Authorization: Bearer <identity token>",
          false,
        );
      const checked = await tokens.check(org.id, token);
      set.status = 204;
      if (!checked.ok && (checked.reason === 'revoked' || checked.reason === 'expired')) return undefined;
      if (!checked.ok && checked.reason !== 'unknown_person')
        throw unauthorized(
          `the bearer token is not a valid person token of this organization (${checked.reason})`,
          true,
        );
      // The person's event is checked before anything is written: a 400 revokes nothing.
      const who = checked.ok ? checked.who : undefined;
      const event = who
        ? buildSubmitted(
            { at: 'body', definition: LOGGED_OUT, members },
            {
              ...withRequestMetadata(members, rc),
              person_id: who.person.personId,
              region: who.person.region,
            },
            org.id,
            ctx.clock,
          )
        : undefined;
      const revoked = checked.ok ? checked.who : { tokenId: checked.tokenId, expiresAt: checked.expiresAt };
      await consistentWrite(request, ctx.headers, () =>
        ctx.storage.transaction(async (tx) => {
          const fresh = await issuer.revoke(
            {
              orgId: org.id,
              tokenId: revoked.tokenId,
              expiresAt: revoked.expiresAt,
              ...(who ? { personId: who.person.personId } : {}),
              reason: 'logout',
            },
            { tx },
          );
          // A person deleted since the token was issued has no region to report: revoked, no event.
          if (fresh && event) await ctx.events.publishBuilt([event], { tx });
        }),
      );
      return undefined;
    },
    {
      orgOnly: true,
      parse: 'none',
      headers: consistencyHeaders(ctx.headers),
      detail: {
        requestBody: logoutBodyDoc,
        operationId: 'PostLogout',
        summary: "Log a person out: revoke the person's token",
        description:
          "End-user facing: `Service-OrgID` and `Authorization: Bearer <identity token>`. Revokes the token (POST /token/validate answers revoked from then on) and emits PersonLoggedOut_v1 in the same transaction, its analytics_metadata and browser_metadata from the optional body `{analytics_metadata?, browser_metadata?}` completed from the request as for /sdk/events. 204; also 204, with no event, for a token already revoked or expired. 401 (WWW-Authenticate: Bearer) without a token or with one that is not a valid person token of this organization. A browser Origin must be one of the organization's allowed origins (403). Rate-limited per client address with the SDK's events (429).",
        tags: ['SDK'],
        security: [{ orgId: [] }],
        // Here rather than a `response` map, which would replace this 204 in the document.
        responses: {
          204: { description: 'Logged out (or the token was revoked or expired already)' },
          400: errorDoc('A body member that breaks its rule, or a bad consistency header'),
          401: errorDoc('No bearer token, or not a valid person token of this organization'),
          403: errorDoc("A browser Origin that is not one of the organization's allowed origins"),
          404: errorDoc('No such organization'),
          429: errorDoc('Too many requests from this client address; Retry-After says when to retry'),
          ...writeErrorDocs,
        },
      },
    },
  );
}
