/**
 * The event catalogue and publisher: every event of the spec with its schema and sample, the trigger
 * names webhooks accept, `buildEvent` (validation and event_metadata) and the EventPublisher.
 */
export { eventCatalogue, eventDefinition } from './catalogue/index.ts';
export { defineEvent, type EventSpec } from './define.ts';
export { EventErrors } from './errors.ts';
export { type BuildEventInput, buildEvent, eventMetadataSchema, isServiceEvent } from './metadata.ts';
export { createEventPublisher, type EventPublisherOptions } from './publisher.ts';
export { PasswordChangeInitiator, PersonHandleType, SHARED_TYPES } from './shared-types.ts';
export { nanoTimestamp } from './timestamp.ts';
export {
  ACCEPTED_TRIGGER_NAMES,
  type AcceptedTriggerName,
  acceptedTriggerName,
  TRIGGERABLE_EVENT_NAMES,
} from './trigger-names.ts';
export * from './types.ts';
