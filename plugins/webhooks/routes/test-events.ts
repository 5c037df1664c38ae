import { Elysia } from 'elysia';
import * as v from 'valibot';
import { ServiceError } from '../../../core/errors.ts';
import { buildEvent, eventCatalogue, eventDefinition } from '../../../core/events/index.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import { errorResponses, ok, resultOf } from '../../../core/http/envelope.ts';
import { isUuid } from '../../../core/ids.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import { WebhookErrors } from '../errors.ts';
import { EventSchema, TEST_EVENT_LIMITS, TestEventsSchema } from '../schema.ts';
import { apiKeySecurity, TAG } from './common.ts';

type Spec = v.InferOutput<typeof TestEventsSchema>[number];

/** The catalogue entry an event_name names: a catalogue name, or an accepted trigger spelling of one. */
function definitionOf(name: string, i: number) {
  const definition = eventDefinition(name) ?? eventDefinition(name.replace(/^(.+)V(\d+)$/, '$1_v$2'));
  if (!definition)
    throw new ServiceError(
      400,
      WebhookErrors.UNKNOWN_EVENT,
      `body[${i}].event_name: ${JSON.stringify(name)} is not an event of the catalogue; known: ${[...eventCatalogue.keys()].join(', ')}`,
    );
  return definition;
}

function checkBounds(specs: Spec[]) {
  specs.forEach((s, i) => {
    const id = s.analytics_correlation_id;
    if (id !== undefined && id !== '' && !isUuid(id))
      throw new ServiceError(
        400,
        'VALIDATION',
        `body[${i}].analytics_correlation_id: must be a UUID (got ${JSON.stringify(id)})`,
      );
  });
  const total = specs.reduce((n, s) => n + (s.count ?? 1) * (s.duplicates ? 2 : 1), 0);
  if (total > TEST_EVENT_LIMITS.total)
    throw new ServiceError(
      400,
      WebhookErrors.TOO_MANY_TEST_EVENTS,
      `body: asks for ${total} events (count, twice with duplicates); at most ${TEST_EVENT_LIMITS.total} per request`,
    );
}

/**
 * `POST /test-events`: events built from the catalogue's sample payloads with is_test_event true,
 * published like any other (webhooks with a matching trigger are called). With `duplicates`, each event
 * is published twice with the same event_id, so receivers can test their de-duplication on `sub`.
 */
export function testEventRoutes(ctx: ServiceContext) {
  return new Elysia().use(ctx.auth).post(
    '/test-events',
    async ({ org, body, set }) => {
      checkBounds(body);
      const events: ServiceEvent[] = [];
      const duplicates: ServiceEvent[] = [];
      body.forEach((spec, i) => {
        const definition = definitionOf(spec.event_name, i);
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
      await ctx.events.publishBuilt(events);
      // The publisher's message id is the event_id, which the bus de-duplicates: the second copy goes
      // under a message id of its own, and the router fans it out like any other message.
      if (duplicates.length)
        await ctx.bus.publish(
          EVENTS_TOPIC,
          duplicates.map((e) => ({ id: `${e.event_metadata.event_id}.duplicate`, payload: e as JsonValue })),
        );
      set.status = 201;
      return ok(interleave(events, duplicates));
    },
    {
      apiKey: true,
      parse: 'json',
      body: TestEventsSchema,
      response: { 201: resultOf(v.array(EventSchema)), ...errorResponses },
      detail: {
        operationId: 'PostTestEvents',
        summary: 'Publish test events',
        description: `A list of {event_name, count (default 1, at most ${TEST_EVENT_LIMITS.count}), duplicates (default false), analytics_correlation_id}: at most ${TEST_EVENT_LIMITS.specs} entries and ${TEST_EVENT_LIMITS.total} events in all. Each event is built from a realistic sample of its payload, with is_test_event true, and published: webhooks with a matching trigger are called. duplicates publishes each event twice with the same event_id. Answers the events as published.`,
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
