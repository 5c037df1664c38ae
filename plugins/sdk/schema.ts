import { index, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import * as v from 'valibot';

/**
 * The browser origins an organization's end-user routes answer (CORS): serialised origins,
 * `https://app.example.com`. Indexed by origin too, for the preflight, which names no organization.
 */
export const sdkAllowedOrigins = pgTable(
  'sdk_allowed_origins',
  { orgId: uuid('org_id').notNull(), origin: text('origin').notNull() },
  (t) => [primaryKey({ columns: [t.orgId, t.origin] }), index('sdk_allowed_origins_origin_idx').on(t.origin)],
);

/** Origins an organization lists at most. */
export const MAX_ORIGINS = 50;

export const AllowedOriginsBody = v.object({
  allowed_origins: v.pipe(
    v.array(
      v.pipe(v.string('must be a string'), v.maxLength(512, 'must be at most 512 characters')),
      'must be an array of origins',
    ),
    v.maxLength(MAX_ORIGINS, `must hold at most ${MAX_ORIGINS} origins`),
    v.description(
      'Origins as browsers send them: `https://host[:port]` (http only on localhost, 127.0.0.1 or [::1]), no path, query or fragment; a trailing slash is dropped. Replaces the list.',
    ),
  ),
});

export const AllowedOriginsResult = v.object({
  result: v.object({ allowed_origins: v.array(v.string()) }),
});

// The request bodies the SDK routes read themselves (`parse: 'none'`), written out for the OpenAPI
// document; submittedEvents and the catalogue's schemas check them.
const str = (description: string) => ({ type: 'string' as const, description });
const analyticsDoc = {
  type: 'object' as const,
  description: 'Members left out are filled from the request.',
  properties: {
    analytics_correlation_id: str(
      "A UUID correlating the client's events; default: Service-Analytics-Correlation-ID, else a fresh one.",
    ),
    client_ip_address: str(
      'Ignored when the service knows the client address (it always does over a socket).',
    ),
  },
};
const browserDoc = {
  type: 'object' as const,
  description: 'Members left out are filled from the request.',
  properties: {
    user_agent: str('Default: the User-Agent header.'),
    window_location: str('Default: the Referer header, else Origin.'),
    service_sdk_version: str('Default: the Service-SDK-Version header.'),
  },
};
const sdkEventDoc = {
  type: 'object' as const,
  required: ['event_name'],
  properties: {
    event_name: {
      type: 'string' as const,
      enum: ['ServiceSDKLoaded_v1', 'VirtualPageLoaded_v1', 'PersonIdentified_v1'],
      description: 'The catalogue name of the event.',
    },
    analytics_metadata: analyticsDoc,
    browser_metadata: browserDoc,
    person_id: str(
      "VirtualPageLoaded_v1 and PersonIdentified_v1: only with the person's token, which fills it.",
    ),
    region: str("The region of the token's person's data; filled from it."),
  },
};

/** POST /sdk/events: one event, or an array of them. */
export const sdkEventsBodyDoc = (maxEvents: number) => ({
  required: true,
  description: `One SDK event, or an array of 1 to ${maxEvents}.`,
  content: {
    'application/json': {
      schema: {
        oneOf: [
          sdkEventDoc,
          { type: 'array' as const, items: sdkEventDoc, minItems: 1, maxItems: maxEvents },
        ],
      },
    },
  },
});

/** POST /logout: optional metadata of the PersonLoggedOut_v1 event. */
export const logoutBodyDoc = {
  required: false,
  description: 'Optional: the logout event’s metadata; the person is the token’s.',
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        additionalProperties: false,
        properties: { analytics_metadata: analyticsDoc, browser_metadata: browserDoc },
      },
    },
  },
};

export const AcceptedResult = v.object({
  result: v.object({
    accepted: v.pipe(v.number(), v.description('How many events were published.')),
    event_ids: v.pipe(v.array(v.string()), v.description('Their event_id, in the order sent.')),
  }),
});
