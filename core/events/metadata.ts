import * as v from 'valibot';
import { formatIssues } from '../http/validation.ts';
import { isUuid, uuidv7 } from '../ids.ts';
import type { Clock } from '../ports/clock.ts';
import type { JsonValue } from '../ports/event-bus.ts';
import { withoutUndefined } from './define.ts';
import { EventErrors } from './errors.ts';
import { identifier, strict, timestamp, uint64, uuid } from './formats.ts';
import { nanoTimestamp } from './timestamp.ts';
import { type EventDefinition, type EventMetadata, EventSource, type ServiceEvent } from './types.ts';

/** `event_metadata` exactly as the spec's envelope table lists it. */
export const eventMetadataSchema = strict({
  is_test_event: v.boolean(),
  event_id: uuid(),
  timestamp: timestamp(),
  source: v.picklist(Object.values(EventSource), 'must be an EventSource number (0 to 3)'),
  event_type: identifier(),
  event_name: identifier(),
  event_version: uint64(),
  organization_id: v.optional(identifier()),
  root_organization_id: identifier(),
});

const envelope = v.looseObject({ event_metadata: eventMetadataSchema });

/**
 * True when a value (a bus message's payload, say) is an event: an object whose `event_metadata` is
 * valid. The payload members are not checked: they were when the event was built.
 */
export const isServiceEvent = (value: unknown): value is ServiceEvent => v.is(envelope, value);

/** What `buildEvent` needs besides the catalogue entry. */
export interface BuildEventInput {
  /** The organization the event belongs to: its organization_id and root_organization_id. */
  readonly orgId: string;
  /** The payload members, without event_metadata: checked against the entry's schema here. */
  readonly members: object;
  /** @default false */
  readonly isTest?: boolean;
  readonly clock: Clock;
  /** A UUID to use as event_id (to build a duplicate on purpose); a fresh UUID v7 by default. */
  readonly eventId?: string;
}

/**
 * Validates an event's members against its catalogue schema and adds `event_metadata`.
 * Throws a 400 ServiceError (`INVALID_EVENT_PAYLOAD`) naming the event, each member path and the rule it
 * broke, such as `PersonCreated_v1.handles[0].type: must be a PersonHandleType number (...)`.
 *
 * @example
 * const event = buildEvent(eventDefinition('RoleDeleted_v1')!, {
 *   orgId, clock, members: { role_name: 'billing-admin' },
 * });
 * event.event_metadata.event_name; // 'RoleDeleted_v1'
 */
export function buildEvent(definition: EventDefinition, input: BuildEventInput): ServiceEvent {
  const parsed = v.safeParse(definition.schema, input.members);
  if (!parsed.success) throw EventErrors.INVALID_EVENT_PAYLOAD(formatIssues(definition.name, parsed.issues));
  if (input.eventId !== undefined && !isUuid(input.eventId))
    throw EventErrors.INVALID_EVENT_ID(input.eventId);
  const now = input.clock.now();
  // A root organization is its own root: organizations have no parent in this service (yet).
  const event_metadata: EventMetadata = {
    is_test_event: input.isTest ?? false,
    event_id: input.eventId ?? uuidv7(now),
    timestamp: nanoTimestamp(input.clock),
    source: definition.source,
    event_type: definition.type,
    event_name: `${definition.type}_v${definition.version}`,
    event_version: definition.version,
    organization_id: input.orgId,
    root_organization_id: input.orgId,
  };
  // The parsed output, not the input: it holds the schema's members only, and no undefined values.
  const members = withoutUndefined(parsed.output) as Record<string, JsonValue>;
  return { event_metadata, ...members };
}
