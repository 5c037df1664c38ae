import type * as v from 'valibot';
import type { JsonValue } from '../ports/event-bus.ts';
import { strict } from './formats.ts';
import type { EventDefinition, EventMember, EventSourceNumber, SampleContext } from './types.ts';

/** The members of an event as a publisher passes them: optional members may be left out. */
export type EventInput<E extends v.ObjectEntries> = v.InferInput<v.StrictObjectSchema<E, undefined>>;

/** What one catalogue entry is declared with; `defineEvent` derives the rest. */
export interface EventSpec<E extends v.ObjectEntries, T extends string = string, V extends number = number> {
  /** Unversioned type, e.g. `PersonCreated`. */
  readonly type: T;
  /** @default 1 */
  readonly version?: V;
  /** The spec's type number; undefined where the spec does not show it. */
  readonly typeNumber: number | undefined;
  readonly source: EventSourceNumber;
  /** @default true */
  readonly triggerable?: boolean;
  /** The payload members: `v.optional(...)` for those the spec says may be absent. */
  readonly members: E;
  /** A realistic payload; typed against the members, so a sample cannot drift from its schema silently. */
  readonly sample: (context: SampleContext) => v.InferInput<v.StrictObjectSchema<E, undefined>>;
}

/**
 * Returns a copy without `undefined` members (at any depth): what JSON would carry. Optional members
 * are simply left out on the wire, never sent as null.
 */
export function withoutUndefined(value: unknown): JsonValue {
  if (Array.isArray(value)) return value.map(withoutUndefined);
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, x] of Object.entries(value)) if (x !== undefined) out[k] = withoutUndefined(x);
    return out;
  }
  return value as JsonValue;
}

/**
 * Declares one event of the catalogue: its name is `<type>_v<version>`, its schema a strict object of
 * its members (an unknown member is refused).
 *
 * @example
 * defineEvent({ type: 'RoleDeleted', typeNumber: 23, source: EventSource.Cloud,
 *   members: { role_name: identifier() }, sample: () => ({ role_name: 'billing-admin' }) })
 */
export function defineEvent<E extends v.ObjectEntries, const T extends string, const V extends number = 1>(
  spec: EventSpec<E, T, V>,
): EventDefinition<`${T}_v${V}`, EventInput<E>> {
  const version = spec.version ?? 1;
  const schema = strict(spec.members);
  const members: EventMember[] = Object.entries(spec.members).map(([name, s]) => ({
    name,
    optional: s.type === 'optional',
  }));
  return {
    // With no version given, V is its default 1, which is what `version` holds.
    name: `${spec.type}_v${version}` as `${T}_v${V}`,
    type: spec.type,
    typeNumber: spec.typeNumber,
    version,
    source: spec.source,
    triggerable: spec.triggerable ?? true,
    schema,
    members,
    sample: (context) => withoutUndefined(spec.sample(context)) as Record<string, JsonValue>,
  };
}
