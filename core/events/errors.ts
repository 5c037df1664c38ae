/** Error codes of the event catalogue and publisher (ServiceError codes, all answered 400). */
export const EventErrors = {
  /** The event name is not in the catalogue. */
  UNKNOWN_EVENT: 'UNKNOWN_EVENT',
  /** The payload members break the event's schema; the message names each member and rule. */
  INVALID_EVENT_PAYLOAD: 'INVALID_EVENT_PAYLOAD',
  /** A given event_id is not a UUID. */
  INVALID_EVENT_ID: 'INVALID_EVENT_ID',
} as const;
