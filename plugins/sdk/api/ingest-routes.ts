import { Elysia } from 'elysia';
import {
  buildSubmitted,
  type IngestRules,
  readIngestBody,
  submittedEvents,
} from '../../../core/events/ingest.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { ErrorEnvelopeSchema, errorResponses, ok, writeErrorResponses } from '../../../core/http/envelope.ts';
import { consistencyHeaders } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { SdkErrors } from '../errors.ts';
import { AcceptedResult, sdkEventsBodyDoc } from '../schema.ts';
import type { Cors } from './cors.ts';
import { withRequestMetadata, withTokenPerson } from './members.ts';
import { bearerOf, type PersonTokens } from './person-token.ts';

/** What POST /sdk/events takes. */
export const SDK_INGEST: IngestRules = {
  endpoint: 'the SDK ingest',
  accepts: ['ServiceSDKLoaded_v1', 'VirtualPageLoaded_v1', 'PersonIdentified_v1'],
  maxEvents: 50,
  maxBytes: 65_536,
};

export interface IngestRouteDeps {
  cors: Cors;
  tokens: PersonTokens;
  readContext: (request: Request) => RequestContext;
  perAddress: TokenBuckets;
  rate: { perMinute: number; burst: number };
}

/** A 429 for a client address past the SDK's limit. */
export function tooMany(retryAfterSeconds: number, rate: IngestRouteDeps['rate']) {
  return SdkErrors.TOO_MANY_REQUESTS.with({ headers: { 'retry-after': String(retryAfterSeconds) } })(
    `SDK requests from this address are limited to ${rate.perMinute} events a minute (bursts of ${rate.burst}); retry after ${retryAfterSeconds} s`,
  );
}

/** POST /sdk/events: the browser SDK's events, published like any other. */
export function ingestRoutes(ctx: ServiceContext, deps: IngestRouteDeps) {
  const { cors, tokens, readContext, perAddress, rate } = deps;
  return new Elysia().use(ctx.auth).post(
    '/sdk/events',
    async ({ org, request, set }) => {
      await cors.check(request, org.id, set);
      const body = await readIngestBody(request, SDK_INGEST.maxBytes);
      const submitted = submittedEvents(body, SDK_INGEST);
      const rc = readContext(request);
      if (rc.clientIp) {
        const take = await perAddress.take(`${org.id}|${addressBucket(rc.clientIp)}`, submitted.length);
        if (!take.ok) throw tooMany(take.retryAfterSeconds, rate);
      }
      const bearer = bearerOf(request);
      const who = bearer === undefined ? undefined : await tokens.personOf(org.id, bearer);
      const events = submitted.map((s) =>
        buildSubmitted(s, withTokenPerson(s, withRequestMetadata(s.members, rc), who), org.id, ctx.clock),
      );
      // All or none: one publish, durable when it resolves.
      await consistentWrite(request, ctx.headers, () => ctx.events.publishBuilt(events));
      set.status = 202;
      return ok({ accepted: events.length, event_ids: events.map((e) => e.event_metadata.event_id) });
    },
    {
      orgOnly: true,
      // Read by the handler once CORS is settled, so the SDK can read every refusal.
      parse: 'none',
      headers: consistencyHeaders(ctx.headers),
      response: {
        202: AcceptedResult,
        ...errorResponses,
        ...writeErrorResponses,
        429: ErrorEnvelopeSchema,
      },
      detail: {
        requestBody: sdkEventsBodyDoc(SDK_INGEST.maxEvents),
        operationId: 'PostSdkEvents',
        summary: "Publish the browser SDK's events",
        description: `End-user facing: \`Service-OrgID\` only. One event, or an array of 1 to ${SDK_INGEST.maxEvents}, each \`{event_name, ...members}\` with event_name ServiceSDKLoaded_v1, VirtualPageLoaded_v1 or PersonIdentified_v1; at most ${SDK_INGEST.maxBytes} bytes. Members are checked against the catalogue (400 naming each, unknown members included); analytics_metadata and browser_metadata members left out are filled from the request (the client address always is, when known; User-Agent; Referer or Origin as window_location; Service-SDK-Version; Service-Analytics-Correlation-ID or a fresh UUID). PersonIdentified_v1, and a VirtualPageLoaded_v1 naming a person, need the person's token (Authorization: Bearer; 401 otherwise): person_id and region come from it (403 for another person). All events are published or none; 202 with their event_ids. A browser Origin must be one of the organization's allowed origins (403). Rate-limited per client address (429 with Retry-After).`,
        tags: ['SDK'],
        security: [{ orgId: [] }],
      },
    },
  );
}
