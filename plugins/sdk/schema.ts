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

const partialAnalytics = v.object({
  analytics_correlation_id: v.optional(
    v.pipe(v.string(), v.description('A UUID correlating the client’s events; a fresh one when absent.')),
  ),
  client_ip_address: v.optional(
    v.pipe(
      v.string(),
      v.description('Ignored when the service knows the client address (it always does over a socket).'),
    ),
  ),
});

const partialBrowser = v.object({
  user_agent: v.optional(v.pipe(v.string(), v.description('Default: the User-Agent header.'))),
  window_location: v.optional(v.pipe(v.string(), v.description('Default: the Referer header, else Origin.'))),
  service_sdk_version: v.optional(
    v.pipe(v.string(), v.description('Default: the Service-SDK-Version header.')),
  ),
});

/** One SDK event as a client sends it (documentation; the route checks the body itself). */
export const SdkEventDoc = v.object({
  event_name: v.pipe(
    v.picklist(['ServiceSDKLoaded_v1', 'VirtualPageLoaded_v1', 'PersonIdentified_v1']),
    v.description('The catalogue name of the event.'),
  ),
  analytics_metadata: v.optional(partialAnalytics),
  browser_metadata: v.optional(partialBrowser),
  person_id: v.optional(
    v.pipe(
      v.string(),
      v.description("Only with the person's token (Authorization: Bearer); filled from it."),
    ),
  ),
  region: v.optional(
    v.pipe(v.string(), v.description("The region of the person's data; filled from the token's person.")),
  ),
});

export const SdkEventsDoc = v.union([SdkEventDoc, v.array(SdkEventDoc)]);

/** What the logout route reads of its optional body (documentation; checked by the route). */
export const LogoutDoc = v.optional(
  v.object({
    analytics_metadata: v.optional(partialAnalytics),
    browser_metadata: v.optional(partialBrowser),
  }),
);

export const AcceptedResult = v.object({
  result: v.object({
    accepted: v.pipe(v.number(), v.description('How many events were published.')),
    event_ids: v.pipe(v.array(v.string()), v.description('Their event_id, in the order sent.')),
  }),
});
