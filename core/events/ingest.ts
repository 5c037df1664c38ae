// Events that clients submit (the SDK's, a gateway's): the body read under a limit of its own, each
// event named by `event_name` and checked against an allow-list and the catalogue's schema. Shared by the
// plugins that take such events, so that every ingest refuses the same things with the same messages.
import * as v from 'valibot';
import { CoreErrors } from '../errors.ts';
import { checkBodyDepth } from '../http/body-depth.ts';
import { formatIssues } from '../http/validation.ts';
import type { Clock } from '../ports/clock.ts';
import { quoted, unstorableTextRule } from '../text.ts';
import { eventDefinition } from './catalogue/index.ts';
import { buildEvent } from './metadata.ts';
import { acceptedTriggerName } from './trigger-names.ts';
import type { EventDefinition, EventName, ServiceEvent } from './types.ts';

/** What one ingest accepts. */
export interface IngestRules {
  /** The endpoint as messages name it: `the SDK ingest`. */
  readonly endpoint: string;
  /** The catalogue names it accepts. */
  readonly accepts: readonly EventName[];
  /** Events in one request at most. */
  readonly maxEvents: number;
  /** Bytes of one request body at most (below the deployment's BODY_LIMIT). */
  readonly maxBytes: number;
}

/** One event as a client sent it: where it sat in the body, its catalogue entry and its members. */
export interface SubmittedEvent {
  /** `body[2]`, or `body` for a body that is one event: what messages about it start with. */
  readonly at: string;
  readonly definition: EventDefinition;
  /** The members as sent, `event_name` left out; not checked yet. */
  readonly members: Record<string, unknown>;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * An ingest's body, read by the route itself (`parse: 'none'`) once it has authenticated the caller, so
 * that every refusal carries what the route sets first (an SDK route's CORS headers): read whole up to
 * `maxBytes` (413 beyond, by its declared length before anything is read), as UTF-8 JSON whatever its
 * content type says (a browser's `text/plain` beacon included), nesting no deeper than request bodies
 * may. 400 for an empty body (unless `optional`: then undefined), invalid UTF-8 or JSON, and a string
 * holding U+0000 or a lone surrogate (an event cannot carry it).
 *
 * @example const body = await readIngestBody(request, 65_536);
 */
export async function readIngestBody(
  request: Request,
  maxBytes: number,
  options: { optional?: boolean } = {},
): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw CoreErrors.BODY_TOO_LARGE(maxBytes);
  const bytes = await request.arrayBuffer();
  if (bytes.byteLength > maxBytes) throw CoreErrors.BODY_TOO_LARGE(maxBytes);
  if (bytes.byteLength === 0) {
    if (options.optional) return undefined;
    throw CoreErrors.INVALID_JSON('request body is required: an event object, or an array of them');
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw CoreErrors.INVALID_JSON('request body must be UTF-8 JSON');
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw CoreErrors.INVALID_JSON('request body must be JSON');
  }
  checkBodyDepth(body);
  const unstorable = unstorableText(body, 'body');
  if (unstorable) throw CoreErrors.VALIDATION(unstorable);
  return body;
}

/**
 * The first string of a parsed body, value or member name, that no event can carry, said where it is
 * (`body[1].user_agent: must not contain ...`): events are kept as jsonb, which holds neither U+0000
 * nor a lone surrogate, so such a string would fail the publish with a 500 rather than this 400. The
 * body nests at most MAX_BODY_DEPTH levels (checked first), so the walk is bounded.
 */
function unstorableText(value: unknown, at: string): string | undefined {
  if (typeof value === 'string') {
    const rule = unstorableTextRule(value);
    return rule && `${at}: ${rule}`;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableText(item, `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const rule = unstorableTextRule(key);
    if (rule) return `${at}: the member name ${quoted(key)} ${rule}`;
    const found = unstorableText(item, `${at}.${key}`);
    if (found) return found;
  }
  return undefined;
}

/** The catalogue entry an ingest takes for `name`, or a 400 that says why it takes none. */
function definitionFor(name: unknown, at: string, rules: IngestRules): EventDefinition {
  const where = `${at}.event_name`;
  const accepted = `${rules.endpoint} accepts ${rules.accepts.join(', ')}`;
  if (name === undefined)
    throw CoreErrors.VALIDATION(`${where}: required, the event's catalogue name; ${accepted}`);
  if (typeof name !== 'string' || name === '')
    throw CoreErrors.VALIDATION(
      `${where}: must be the event's catalogue name, a non-empty string (got ${name === '' ? 'an empty string' : name === null ? 'null' : Array.isArray(name) ? 'an array' : typeof name}); ${accepted}`,
    );
  // `MitmAttackDetectedV1`, the spec's trigger spelling, names `MitmAttackDetected_v1` here too.
  const definition = eventDefinition(acceptedTriggerName(name) ?? name);
  const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
  if (!definition) throw CoreErrors.VALIDATION(`${where}: ${shown} is not an event of the catalogue`);
  if (!definition.triggerable)
    throw CoreErrors.VALIDATION(
      `${where}: ${definition.name} is a cloud-provider event; those are not subscribable, and ${rules.endpoint} does not take them`,
    );
  if (!(rules.accepts as readonly string[]).includes(definition.name))
    throw CoreErrors.VALIDATION(`${where}: ${definition.name} is not taken here; ${accepted}`);
  return definition;
}

/**
 * The events of a parsed ingest body: one event object, or an array of 1 to `maxEvents` of them, each
 * `{ event_name, ...members }`. 400 naming where and why for anything else: a body of another shape, too
 * many events, an event name the catalogue does not know, a cloud-provider event, or one the endpoint
 * does not take. Members are checked later (`buildSubmitted`), once the endpoint has filled its own.
 */
export function submittedEvents(body: unknown, rules: IngestRules): SubmittedEvent[] {
  const list = Array.isArray(body) ? body : [body];
  const single = !Array.isArray(body);
  if (list.length === 0)
    throw CoreErrors.VALIDATION(`body: must hold 1 to ${rules.maxEvents} events (got none)`);
  if (list.length > rules.maxEvents)
    throw CoreErrors.VALIDATION(
      `body: must hold 1 to ${rules.maxEvents} events (got ${list.length}); send the rest in another request`,
    );
  return list.map((item, i) => {
    const at = single ? 'body' : `body[${i}]`;
    if (!isObject(item))
      throw CoreErrors.VALIDATION(`${at}: must be an event object {"event_name": ..., members}`);
    const { event_name, ...members } = item;
    return { at, definition: definitionFor(event_name, at, rules), members };
  });
}

/**
 * The event built from a submitted one: its members checked against the catalogue's schema (400 naming
 * each member where the client put it, `body[1].browser_metadata.user_agent: required`), then
 * `event_metadata` added as for any event.
 */
export function buildSubmitted(
  submitted: SubmittedEvent,
  members: Record<string, unknown>,
  orgId: string,
  clock: Clock,
): ServiceEvent {
  const { at, definition } = submitted;
  const checked = v.safeParse(definition.schema, members);
  if (!checked.success)
    throw CoreErrors.VALIDATION(
      `${formatIssues(at, checked.issues)} (the members of ${definition.name}, as the catalogue lists them)`,
    );
  return buildEvent(definition, { orgId, members: checked.output, clock });
}
