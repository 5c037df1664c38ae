import { defineErrors, detail, type ErrorCodeOf } from '../errors.ts';

/** Error codes of the event catalogue and publisher (all answered 400). */
export const EventErrors = defineErrors({
  /** The event name is not in the catalogue. */
  UNKNOWN_EVENT: {
    status: 400,
    message: (eventName: string) =>
      `event_name: ${JSON.stringify(eventName)} is not an event of the catalogue`,
  },
  /** The payload members break the event's schema; the message names each member and rule. */
  INVALID_EVENT_PAYLOAD: { status: 400, message: detail },
  /** A given event_id is not a UUID. */
  INVALID_EVENT_ID: {
    status: 400,
    message: (eventId: string) => `event_id: must be a UUID (got ${JSON.stringify(eventId)})`,
  },
});

export type EventErrorCode = ErrorCodeOf<typeof EventErrors>;
