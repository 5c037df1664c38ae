import {
  bigint,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import * as v from 'valibot';
import { exactObject } from '../../core/http/validation.ts';
import { isWellFormedText, startsWithBom } from '../../core/text.ts';

/**
 * The tables of the webhooks plugin. Times are milliseconds on the service's Clock (bigint), so a test
 * on a fast clock sees the retry window shrink consistently with the bus's delays.
 */

/** Webhooks. `target_url` is unique per organization (the index answers concurrent creates too). */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    /** The WHATWG serialisation of the URL. */
    targetUrl: text('target_url').notNull(),
    /** JSON of the custom headers, sealed by the SecretBox (context `webhook:<id>:custom_headers`). */
    customHeaders: text('custom_headers'),
    /** Null: the defaults (10 s for events, 2 s for sync hooks). */
    timeoutNs: bigint('timeout_ns', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('webhooks_org_target_url_key').on(t.orgId, t.targetUrl)],
);

/** Triggers of a webhook; they go with it. The index serves the router's lookup by (org, name). */
export const webhookTriggers = pgTable(
  'webhook_triggers',
  {
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    orgId: uuid('org_id').notNull(),
    triggerType: text('trigger_type').notNull(),
    triggerName: text('trigger_name').notNull(),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'webhook_triggers_pkey', columns: [t.webhookId, t.triggerType, t.triggerName] }),
    index('webhook_triggers_lookup_idx').on(t.orgId, t.triggerType, t.triggerName, t.webhookId),
  ],
);

/** An event fanned out to webhooks, stored once however many webhooks receive it. */
export const webhookEvents = pgTable('webhook_events', {
  eventId: uuid('event_id').primaryKey(),
  orgId: uuid('org_id').notNull(),
  eventName: text('event_name').notNull(),
  content: jsonb('content').notNull(),
  createdAt: bigint('created_at', { mode: 'number' }).notNull(),
});

/**
 * One event for one webhook, attempted until it succeeds or the retry window ends. No foreign key to
 * the webhook: a deleted webhook's pending deliveries are dropped, and recorded, when they come up.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey(),
    orgId: uuid('org_id').notNull(),
    webhookId: uuid('webhook_id').notNull(),
    eventId: uuid('event_id').notNull(),
    /** What made it: the id of the bus message the router fanned out, or `resend:<uuid>`. */
    source: text('source').notNull(),
    triggerType: text('trigger_type').notNull(),
    triggerName: text('trigger_name').notNull(),
    /** pending, retrying, succeeded or dropped. */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    firstAttemptAt: bigint('first_attempt_at', { mode: 'number' }),
    lastAttemptAt: bigint('last_attempt_at', { mode: 'number' }),
    nextAttemptAt: bigint('next_attempt_at', { mode: 'number' }),
    settledAt: bigint('settled_at', { mode: 'number' }),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    /** The delivery this one resends. */
    resendOf: uuid('resend_of'),
    /** The latest delivery that resends this one. */
    resentAs: uuid('resent_as'),
  },
  (t) => [
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.id),
    uniqueIndex('webhook_deliveries_source_key').on(t.webhookId, t.source),
  ],
);

/** Every attempt of a delivery: what was sent, what came back, how long it took. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    deliveryId: uuid('delivery_id').notNull(),
    webhookId: uuid('webhook_id').notNull(),
    attempt: integer('attempt').notNull(),
    jti: uuid('jti').notNull(),
    startedAt: bigint('started_at', { mode: 'number' }).notNull(),
    latencyMs: real('latency_ms').notNull(),
    ok: boolean('ok').notNull(),
    statusCode: integer('status_code'),
    errorKind: text('error_kind'),
    error: text('error'),
    /** The first bytes of the response body. */
    response: text('response'),
    /** succeeded, retry or dropped: what followed the attempt. */
    outcome: text('outcome').notNull(),
    /** When the next attempt was scheduled (outcome retry). */
    retryAt: bigint('retry_at', { mode: 'number' }),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attempt)],
);

// ---------------------------------------------------------------------------------------------------
// The API's shapes (valibot), for validation and the OpenAPI document. Semantic rules (target_url,
// custom headers, timeout, trigger names) are checked by the handlers, whose messages name the rule.

export const TRIGGER_TYPES = ['event', 'sync_hook'] as const;
export const DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'dropped'] as const;

const rfc3339 = v.pipe(v.string(), v.description('RFC 3339 UTC timestamp'));

/**
 * Header name to its values. Checked by the handler (customHeaderProblems), not here: valibot's record
 * takes an array for an object and silently drops the keys `constructor` and `prototype`, which are
 * valid header names. So the value passes as it came, and the document still says what it is.
 */
export const CustomHeadersSchema = v.pipe(
  v.unknown(),
  v.metadata({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }),
  v.description('Header name to its values; sent with every delivery; sealed at rest.'),
);

const timeoutField = v.pipe(
  v.string(),
  v.description(
    'A duration such as "500ms" or "10s", above 0 and at most 20s. "0s" when unset: the defaults.',
  ),
);

/** Postgres text cannot hold U+0000 (a 500 otherwise), and free text has no use for it. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses
const noNul = v.regex(/^[^\u0000]*$/, 'must not contain the NUL character (\\u0000)');

/** Text stored as given must be well-formed: a lone surrogate would come back as U+FFFD. */
const wellFormed = v.check(isWellFormedText, 'must be well-formed Unicode (a lone surrogate is not)');

/** The embedded database reads a leading U+FEFF back without it (core/text.ts): refused, not altered. */
const noLeadingBom = v.check(
  (s: string) => !startsWithBom(s),
  'must not begin with U+FEFF (a byte order mark)',
);

const nameField = v.pipe(
  v.string(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(200, 'must be at most 200 characters'),
  noNul,
  wellFormed,
  noLeadingBom,
);
const descriptionField = v.pipe(
  v.string(),
  v.maxLength(2000, 'must be at most 2000 characters'),
  noNul,
  wellFormed,
  noLeadingBom,
);

export const WebhookCreateSchema = exactObject(
  {
    target_url: v.pipe(
      v.string(),
      v.description('https URL with a host that is not localhost nor an IP address'),
    ),
    name: nameField,
    description: v.optional(descriptionField),
    custom_headers: v.optional(v.nullable(CustomHeadersSchema)),
    timeout: v.optional(v.nullable(timeoutField)),
  },
  'member',
);

export const WebhookPatchSchema = exactObject(
  {
    target_url: v.optional(v.string()),
    name: v.optional(nameField),
    description: v.optional(descriptionField),
    custom_headers: v.optional(v.nullable(CustomHeadersSchema)),
    timeout: v.optional(v.nullable(timeoutField)),
  },
  'member',
);

/** The body of a trigger create (the reference's EventTrigger or SyncHookTrigger); checked by the handler. */
export const TriggerInputSchema = exactObject(
  { trigger_type: v.string(), trigger_name: v.string() },
  'member',
);

/** The query of a trigger delete: the trigger it names. */
export const TriggerQuery = exactObject(
  {
    trigger_type: v.pipe(v.string(), v.minLength(1, 'is required')),
    trigger_name: v.pipe(v.string(), v.minLength(1, 'is required')),
  },
  'parameter',
);

/** The body of a resend: nothing, or an empty object. */
export const ResendBody = v.optional(exactObject({}, 'member'));

export const WebhookSchema = v.object({
  id: v.string(),
  name: v.string(),
  description: v.string(),
  target_url: v.string(),
  custom_headers: v.optional(CustomHeadersSchema),
  timeout: timeoutField,
});

export const WebhookIdParams = v.object({ webhook_id: v.string() });
export const DeliveryIdParams = v.object({ webhook_id: v.string(), delivery_id: v.string() });

export const TriggerSchema = v.object({
  trigger_type: v.picklist(TRIGGER_TYPES, 'must be event or sync_hook'),
  trigger_name: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200)),
});

export const JwksSchema = v.object({
  keys: v.array(
    v.object({
      kty: v.literal('EC'),
      crv: v.literal('P-256'),
      alg: v.literal('ES256'),
      use: v.literal('sig'),
      key_ops: v.array(v.string()),
      kid: v.string(),
      x: v.string(),
      y: v.string(),
    }),
  ),
});

/**
 * Bounds of POST /test-events. The events of one request are bounded by the burst of its rate limit
 * (TEST_EVENTS_RATE_LIMIT, or the plugin's option): a request above it could never pass.
 */
export const TEST_EVENT_LIMITS = { specs: 50, count: 50 } as const;

/** Resend and recover calls per organization: a minute's rate and the burst (a plugin option). */
export const RESEND_RATE_LIMIT = { perMinute: 60, burst: 20 } as const;

export const TestEventsSchema = v.pipe(
  v.array(
    exactObject(
      {
        event_name: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
        count: v.optional(
          v.pipe(
            v.number(),
            v.integer('must be an integer'),
            v.minValue(1, 'must be at least 1'),
            v.maxValue(TEST_EVENT_LIMITS.count, `must be at most ${TEST_EVENT_LIMITS.count}`),
          ),
        ),
        duplicates: v.optional(v.boolean()),
        analytics_correlation_id: v.optional(v.string()),
      },
      'member',
    ),
  ),
  v.minLength(1, 'must list at least one event'),
  v.maxLength(TEST_EVENT_LIMITS.specs, `must list at most ${TEST_EVENT_LIMITS.specs} entries`),
);

/** A published test event: the reference's BaseTestEvent members, then the event as delivered. */
export const TestEventSchema = v.looseObject({
  event_id: v.string(),
  event_name: v.string(),
  timestamp: rfc3339,
  organization_id: v.string(),
  event_metadata: v.looseObject({
    event_id: v.string(),
    event_name: v.string(),
    event_type: v.string(),
    event_version: v.number(),
    timestamp: v.string(),
    source: v.number(),
    is_test_event: v.boolean(),
    organization_id: v.optional(v.string()),
    root_organization_id: v.string(),
  }),
});

export const AttemptSchema = v.object({
  attempt: v.number(),
  jti: v.string(),
  started_at: rfc3339,
  latency_ms: v.number(),
  ok: v.boolean(),
  status_code: v.optional(v.number()),
  error_kind: v.optional(v.string()),
  error: v.optional(v.string()),
  response: v.optional(v.pipe(v.string(), v.description('The first bytes of the response body'))),
  outcome: v.picklist(['succeeded', 'retry', 'dropped']),
  retry_at: v.optional(rfc3339),
});

export const DeliverySchema = v.object({
  id: v.string(),
  webhook_id: v.string(),
  event_id: v.string(),
  trigger_type: v.string(),
  trigger_name: v.string(),
  status: v.picklist(DELIVERY_STATUSES),
  attempt_count: v.number(),
  created_at: rfc3339,
  first_attempt_at: v.optional(rfc3339),
  last_attempt_at: v.optional(rfc3339),
  next_attempt_at: v.optional(rfc3339),
  settled_at: v.optional(rfc3339),
  last_status_code: v.optional(v.number()),
  last_error: v.optional(v.string()),
  resend_of: v.optional(v.string()),
  resent_as: v.optional(v.string()),
  attempts: v.array(AttemptSchema),
});

// Strict: a misspelt parameter (`?stauts=dropped`) must not silently list everything.
export const DeliveriesQuery = exactObject(
  {
    status: v.optional(v.picklist(DELIVERY_STATUSES, `must be one of ${DELIVERY_STATUSES.join(', ')}`)),
    limit: v.optional(v.pipe(v.string(), v.regex(/^\d{1,3}$/, 'must be an integer from 1 to 100'))),
    cursor: v.optional(v.string()),
  },
  'parameter',
);

export const RecoverSchema = exactObject(
  {
    since: v.pipe(
      v.string(),
      v.description('RFC 3339 time: dropped deliveries created at or after it are resent'),
    ),
  },
  'member',
);
