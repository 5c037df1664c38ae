import { Elysia } from 'elysia';
import * as v from 'valibot';
import { CoreErrors } from '../../../core/errors.ts';
import {
  ACCEPTED_TRIGGER_NAMES,
  acceptedTriggerName,
  buildEvent,
  eventCatalogue,
  eventDefinition,
} from '../../../core/events/index.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import {
  ErrorEnvelopeSchema,
  errorResponses,
  ok,
  resultOf,
  writeErrorResponses,
} from '../../../core/http/envelope.ts';
import { passThrough } from '../../../core/http/openapi-docs.ts';
import { NoQuery, parseOrThrow } from '../../../core/http/validation.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { WebhookErrors } from '../errors.ts';
import { TEST_EVENT_LIMITS, TestEventSchema, TestEventsSchema } from '../schema.ts';
import { apiKeySecurity, consistencyHeaders, consistent, TAG } from './common.ts';

type Spec = v.InferOutput<typeof TestEventsSchema>[number];

/** The rate limit of test events, in events per organization and replica. */
export interface TestEventLimit {
  buckets: TokenBuckets;
  perMinute: number;
  burst: number;
}

// The spec's trigger list writes `MitmAttackDetectedV1` for the catalogue's `MitmAttackDetected_v1`:
// the one other spelling of an event name. `PersonCreatedV1` and the like name nothing.
const ALIASES = ACCEPTED_TRIGGER_NAMES.filter((name) => !eventCatalogue.has(name));
const KNOWN = `known: ${[...eventCatalogue.keys()].join(', ')}; also ${ALIASES.map((a) => `${a} (${acceptedTriggerName(a)})`).join(', ')}`;

/** The catalogue entry an event_name names: its catalogue name exactly, or the spec's alias of one. */
function findDefinition(name: string, i: number) {
  const definition =
    eventDefinition(name) ??
    ((ALIASES as readonly string[]).includes(name) ? eventDefinition(acceptedTriggerName(name)!) : undefined);
  if (!definition)
    throw WebhookErrors.UNKNOWN_EVENT(
      `body[${i}].event_name: ${JSON.stringify(name)} is not an event of the catalogue; ${KNOWN}`,
    );
  return definition;
}

/** The events a request asks for (count, twice with duplicates), after the checks of each entry. */
function eventsAskedFor(specs: Spec[], burst: number): number {
  specs.forEach((s, i) => {
    const id = s.analytics_correlation_id;
    if (id !== undefined && id !== '' && !isUuid(id))
      throw CoreErrors.VALIDATION(
        `body[${i}].analytics_correlation_id: must be a UUID (got ${JSON.stringify(id)})`,
      );
  });
  const total = specs.reduce((n, s) => n + (s.count ?? 1) * (s.duplicates ? 2 : 1), 0);
  if (total > burst)
    throw WebhookErrors.TOO_MANY_TEST_EVENTS(
      `body: asks for ${total} events (count, twice with duplicates); at most ${burst} per request, the burst of the test-events rate limit`,
    );
  return total;
}

/** An event as the answer lists it: the reference's BaseTestEvent members, then the event itself. */
const listed = (e: ServiceEvent, orgId: string) => ({
  event_id: e.event_metadata.event_id,
  event_name: e.event_metadata.event_name,
  timestamp: e.event_metadata.timestamp,
  organization_id: e.event_metadata.organization_id ?? orgId,
  ...e,
});

/**
 * The body checked: an array of at most TEST_EVENT_LIMITS.specs entries before any entry is looked at,
 * so a long array of bad entries costs one issue, not one (holding the whole body) per entry.
 */
function parseTestEvents(body: unknown): Spec[] {
  if (!Array.isArray(body)) throw CoreErrors.VALIDATION('body: must be an array of test event descriptions');
  if (body.length > TEST_EVENT_LIMITS.specs)
    throw CoreErrors.VALIDATION(
      `body: must list at most ${TEST_EVENT_LIMITS.specs} entries (got ${body.length})`,
    );
  return parseOrThrow(TestEventsSchema, body, 'body');
}

/**
 * `POST /test-events`: events built from the catalogue's sample payloads with is_test_event true,
 * published like any other (webhooks with a matching trigger are called). With `duplicates`, each event
 * is published twice with the same event_id, so receivers can test their de-duplication on `sub`.
 * Rate-limited per organization in events, not requests: a request of 20 events takes 20 tokens.
 */
export function testEventRoutes(ctx: ServiceContext, limit: TestEventLimit) {
  const { buckets, perMinute, burst } = limit;
  return new Elysia().use(ctx.auth).post(
    '/test-events',
    async ({ org, body: raw, request, set }) => {
      const body = parseTestEvents(raw);
      const total = eventsAskedFor(body, burst);
      const definitions = body.map((spec, i) => findDefinition(spec.event_name, i));
      // Only a request that would be served takes tokens: a 400 costs nothing.
      const take = await buckets.take(org.id, total);
      if (!take.ok)
        throw CoreErrors.RATE_LIMITED.with({ headers: { 'retry-after': String(take.retryAfterSeconds) } })(
          `test events of organization ${org.id} are limited to ${perMinute} events a minute (bursts of ${burst}); this request asks for ${total}: retry after ${take.retryAfterSeconds} s`,
        );
      const events: ServiceEvent[] = [];
      const duplicates: ServiceEvent[] = [];
      body.forEach((spec, i) => {
        const definition = definitions[i]!;
        for (let n = 0; n < (spec.count ?? 1); n++) {
          const members = definition.sample({
            orgId: org.id,
            now: ctx.clock.now(),
            ...(spec.analytics_correlation_id
              ? { analyticsCorrelationId: spec.analytics_correlation_id }
              : {}),
          });
          const event = buildEvent(definition, { orgId: org.id, members, isTest: true, clock: ctx.clock });
          events.push(event);
          if (spec.duplicates) duplicates.push(event);
        }
      });
      // Published (durable) within the consistency timeout, or 408 while the publish goes on.
      await consistent(request, ctx.headers, async () => {
        await ctx.events.publishBuilt(events);
        // The publisher's message id is the event_id, which the bus de-duplicates: the second copy goes
        // under a message id of its own, and the router fans it out like any other message.
        if (duplicates.length)
          await ctx.bus.publish(
            EVENTS_TOPIC,
            duplicates.map((e) => ({
              id: `${e.event_metadata.event_id}.duplicate`,
              payload: e as JsonValue,
            })),
          );
      });
      set.status = 201;
      return ok(interleave(events, duplicates).map((e) => listed(e, org.id)));
    },
    {
      apiKey: true,
      headers: consistencyHeaders(ctx.headers),
      query: NoQuery,
      parse: 'json',
      // Documents the body; parseTestEvents checks it, its length first (see there).
      body: passThrough(TestEventsSchema),
      response: {
        201: resultOf(v.array(TestEventSchema)),
        ...errorResponses,
        ...writeErrorResponses,
        429: ErrorEnvelopeSchema,
      },
      detail: {
        operationId: 'PostTestEvents',
        summary: 'Publish test events',
        description: `A list of {event_name, count (default 1, at most ${TEST_EVENT_LIMITS.count}), duplicates (default false), analytics_correlation_id}: at most ${TEST_EVENT_LIMITS.specs} entries and ${burst} events in all. event_name is a catalogue name (MitmAttackDetectedV1 also names MitmAttackDetected_v1). Each event is built from a realistic sample of its payload, with is_test_event true, and published: webhooks with a matching trigger are called. duplicates publishes each event twice with the same event_id. Answers the events as published, each with event_id, event_name, timestamp and organization_id at the top. Rate-limited per organization to ${perMinute} events a minute with bursts of ${burst} (shared by all replicas; each event counts, duplicates twice): 429 with Retry-After beyond.`,
        tags: [TAG],
        security: apiKeySecurity,
      },
    },
  );
}

/** The events in order, each duplicate right after its original. */
function interleave(events: ServiceEvent[], duplicates: ServiceEvent[]): ServiceEvent[] {
  const twice = new Set(duplicates);
  return events.flatMap((e) => (twice.has(e) ? [e, e] : [e]));
}
