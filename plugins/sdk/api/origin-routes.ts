import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok, writeErrorResponses } from '../../../core/http/envelope.ts';
import { refuseArrayBody } from '../../../core/http/object-body.ts';
import { consistencyHeaders, routeDetail } from '../../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { AllowedOriginsBody, AllowedOriginsResult } from '../schema.ts';
import { normaliseOrigins, type OriginStore } from '../store/origins.ts';

const detail = (operationId: string, summary: string) =>
  routeDetail(['SDK'])(
    operationId,
    summary,
    "The browser origins whose pages may call the organization's end-user SDK routes (POST /sdk/events, POST /logout) across origins: CORS answers them, and a browser request from any other Origin is refused with 403. Empty until set. A replica keeps what it read for 5 s: a change counts at once on the replica that made it, within 5 s on the others.",
  );

/** GET, PUT /organizations/allowed-origins. */
export function originRoutes(ctx: ServiceContext, store: OriginStore) {
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/organizations/allowed-origins',
      async ({ org }) => ok({ allowed_origins: await store.list(org.id) }),
      {
        apiKey: true,
        response: { 200: AllowedOriginsResult, ...errorResponses },
        detail: detail('GetOrganizationsAllowedOrigins', "The organization's allowed browser origins"),
      },
    )
    .put(
      '/organizations/allowed-origins',
      async ({ org, body, request }) => {
        const origins = normaliseOrigins(body.allowed_origins);
        await consistentWrite(request, ctx.headers, () => store.set(org.id, origins));
        return ok({ allowed_origins: origins });
      },
      {
        apiKey: true,
        parse: 'json',
        transform: refuseArrayBody,
        body: AllowedOriginsBody,
        headers: consistencyHeaders(ctx.headers),
        response: { 200: AllowedOriginsResult, ...errorResponses, ...writeErrorResponses },
        detail: detail(
          'PutOrganizationsAllowedOrigins',
          "Replace the organization's allowed browser origins",
        ),
      },
    );
}
