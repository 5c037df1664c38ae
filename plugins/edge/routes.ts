import { Elysia } from 'elysia';
import {
  buildSubmitted,
  type IngestRules,
  readIngestBody,
  submittedEvents,
} from '../../core/events/ingest.ts';
import { consistentWrite } from '../../core/http/consistency.ts';
import { errorResponses, ok, writeErrorResponses } from '../../core/http/envelope.ts';
import { API_KEY_SECURITY, consistencyHeaders } from '../../core/http/openapi-docs.ts';
import type { ServiceContext } from '../../core/plugin.ts';
import { AcceptedResult, edgeEventsBodyDoc } from './schema.ts';

/** What POST /edge/events takes. */
export const EDGE_INGEST: IngestRules = {
  endpoint: 'the edge ingest',
  accepts: [
    'GateServerStarted_v1',
    'GateRequestHandled_v1',
    'GateRequestCredentialFound_v1',
    'MitmAttackDetected_v1',
  ],
  maxEvents: 100,
  maxBytes: 524_288,
};

/** POST /edge/events: events of trusted components, with the organization's API key. */
export function edgeRoutes(ctx: ServiceContext) {
  return new Elysia().use(ctx.auth).post(
    '/edge/events',
    async ({ org, request, set }) => {
      const body = await readIngestBody(request, EDGE_INGEST.maxBytes);
      const events = submittedEvents(body, EDGE_INGEST).map((s) =>
        buildSubmitted(s, s.members, org.id, ctx.clock),
      );
      // All or none: one publish, durable when it resolves.
      await consistentWrite(request, ctx.headers, () => ctx.events.publishBuilt(events));
      set.status = 202;
      return ok({ accepted: events.length, event_ids: events.map((e) => e.event_metadata.event_id) });
    },
    {
      apiKey: true,
      parse: 'none',
      headers: consistencyHeaders(ctx.headers),
      response: { 202: AcceptedResult, ...errorResponses, ...writeErrorResponses },
      detail: {
        requestBody: edgeEventsBodyDoc(EDGE_INGEST.maxEvents),
        operationId: 'PostEdgeEvents',
        summary: 'Publish events of trusted components (gateways, the edge function)',
        description: `With the organization's API key. One event, or an array of 1 to ${EDGE_INGEST.maxEvents}, each \`{event_name, ...members}\` with event_name one of ${EDGE_INGEST.accepts.join(', ')} (MitmAttackDetectedV1 names the last too); at most ${EDGE_INGEST.maxBytes} bytes. The members are the event's as the catalogue lists them, all given by the sender (nothing is filled in): 400 naming each member that breaks its rule, an unknown member or a missing one. Cloud-provider events are refused with 400: they are not subscribable. All events are published or none; 202 with their event_ids.`,
        tags: ['Edge'],
        security: API_KEY_SECURITY,
      },
    },
  );
}
