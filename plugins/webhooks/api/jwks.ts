import { Elysia } from 'elysia';
import { CoreErrors } from '../../../core/errors.ts';
import { ErrorEnvelopeSchema } from '../../../core/http/envelope.ts';
import { jwksRenderer } from '../../../core/http/jwks-response.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { JwksSchema } from '../schema.ts';
import { orgOnlySecurity, TAG } from './common.ts';

/** True when an If-None-Match header names this strong ETag (or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

/**
 * `GET /organizations/webhooks/verification-jwks`: the organization's ES256 verification keys (current
 * and, during a rotation, previous), public, so `Service-OrgID` only. Cacheable (Cache-Control, a strong
 * ETag, 304 on If-None-Match, Vary on the organization header) and rate-limited per organization with a
 * token bucket.
 */
export function jwksRoutes(ctx: ServiceContext, buckets: TokenBuckets, maxAgeSeconds: number) {
  const render = jwksRenderer();

  return new Elysia().use(ctx.auth).get(
    '/organizations/webhooks/verification-jwks',
    async ({ org, request }) => {
      const take = await buckets.take(org.id);
      if (!take.ok)
        throw CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': String(take.retryAfterSeconds) } })(
          `the verification key set of organization ${org.id} is limited to 30 requests a minute (bursts of 60); retry after ${take.retryAfterSeconds} s, and cache the keys`,
        );
      const { body, etag } = await render(await ctx.signer.jwks(org.id));
      const headers = {
        'cache-control': `public, max-age=${maxAgeSeconds}`,
        etag,
        // The answer depends on the organization header: a shared cache must key on it.
        vary: ctx.headers.orgId,
        'content-type': 'application/json',
      };
      if (matches(request.headers.get('if-none-match'), etag))
        return new Response(null, { status: 304, headers });
      return new Response(body, { status: 200, headers });
    },
    {
      orgOnly: true,
      response: {
        200: JwksSchema,
        400: ErrorEnvelopeSchema,
        404: ErrorEnvelopeSchema,
        429: ErrorEnvelopeSchema,
      },
      detail: {
        operationId: 'GetOrganizationsWebhooksVerificationJwks',
        summary: 'Verification key set of webhook requests',
        description:
          'The ES256 keys that sign webhook requests, chosen by the JWT header kid. Public: Service-OrgID only. Rate-limited per organization to 30 requests a minute with bursts of 60 (shared by all replicas); cache the keys (Cache-Control, ETag and If-None-Match are honoured).',
        tags: [TAG],
        security: orgOnlySecurity,
        responses: { 304: { description: 'Not modified: the ETag still names the current key set' } },
      },
    },
  );
}
