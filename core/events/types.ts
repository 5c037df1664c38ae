import type * as v from 'valibot';
import type { JsonValue } from '../ports/event-bus.ts';
import type { Transaction } from '../ports/storage.ts';

/** `EventSource`: appears as a number in JSON. */
export const EventSource = { EventSource_UNSPECIFIED: 0, Cloud: 1, SDK: 2, Gate: 3 } as const;
export type EventSourceNumber = (typeof EventSource)[keyof typeof EventSource];

/** `event_metadata`, filled by the service. */
export interface EventMetadata {
  is_test_event: boolean;
  /** UUID. */
  event_id: string;
  /** RFC 3339 UTC with nanoseconds. */
  timestamp: string;
  source: EventSourceNumber;
  /** Constant across versions, e.g. `PersonCreated`. */
  event_type: string;
  /** `<event_type>_v<event_version>`, e.g. `PersonCreated_v1`. */
  event_name: string;
  event_version: number;
  organization_id?: string;
  root_organization_id: string;
}

/** An event as carried on the bus and delivered to webhooks: metadata plus the payload's members. */
export type ServiceEvent = { event_metadata: EventMetadata } & {
  [member: string]: JsonValue | EventMetadata;
};

/** One payload member of an event: its name, and whether the spec lets it be absent. */
export interface EventMember {
  readonly name: string;
  readonly optional: boolean;
}

/** What a sample payload is made from. */
export interface SampleContext {
  readonly orgId: string;
  /** Milliseconds since the Unix epoch: the samples' timestamps are around it. */
  readonly now: number;
  /** Used as `analytics_metadata.analytics_correlation_id` when given (a fresh UUID otherwise). */
  readonly analyticsCorrelationId?: string;
}

/** One entry of the catalogue; `N` is its versioned name and `M` its members' type when known. */
export interface EventDefinition<N extends string = string, M extends object = Record<string, JsonValue>> {
  /** Versioned name as in payload definitions, e.g. `MitmAttackDetected_v1`. */
  readonly name: N;
  /** Phantom member carrying the payload's type (what `publish` accepts); never set. */
  readonly __members?: M;
  /** Unversioned type, e.g. `MitmAttackDetected`. */
  readonly type: string;
  /** The spec's type number; undefined where the spec does not show it (PermissionsSetToPerson). */
  readonly typeNumber: number | undefined;
  readonly version: number;
  /**
   * The source this service stamps on the event. Where the spec allows two (AuthenticationFailed: SDK or
   * Cloud) it is the one this server emits from (Cloud); see the catalogue files for each choice.
   */
  readonly source: EventSourceNumber;
  /** True when a webhook may subscribe to it with an `event` trigger (cloud-provider events may not). */
  readonly triggerable: boolean;
  /** The payload members (without event_metadata). */
  readonly schema: v.GenericSchema<unknown, object>;
  /** The payload members in the spec's order, with which of them may be absent. */
  readonly members: readonly EventMember[];
  /** A realistic sample payload (without event_metadata), valid against `schema`. */
  sample(context: SampleContext): Record<string, JsonValue>;
}

/**
 * Publishes events: validates the payload against the catalogue, fills event_metadata, publishes durably.
 * The name and the members are typed from the catalogue, so a misspelt event or member fails the type check.
 */
export interface EventPublisher {
  publish<N extends EventName>(
    orgId: string,
    eventName: N,
    members: EventMembers<N>,
    options?: { tx?: Transaction; isTest?: boolean },
  ): Promise<ServiceEvent>;
  /**
   * Publishes an event whose name is known only at run time (tooling, samples): the same checks as
   * `publish`, at run time only. Prefer `publish`, which the type check holds to the catalogue.
   */
  publishByName(
    orgId: string,
    eventName: string,
    members: object,
    options?: { tx?: Transaction; isTest?: boolean },
  ): Promise<ServiceEvent>;
  /** Publishes several already-built events at once (one bus call). */
  publishBuilt(events: readonly ServiceEvent[], options?: { tx?: Transaction }): Promise<void>;
}

/** Every entry of the catalogue with its own name and members' type. */
export type CatalogueEntry = typeof import('./catalogue/entries.ts')['catalogueEntries'][number];

/** The versioned name of every event in the catalogue: `'PersonCreated_v1' | 'RoleDeleted_v1' | ...`. */
export type EventName = CatalogueEntry['name'];

/** The members of the event named `N`, as a publisher passes them (optional members may be left out). */
export type EventMembers<N extends EventName> =
  Extract<CatalogueEntry, { name: N }> extends EventDefinition<N, infer M> ? M : never;

/** The bus topic events travel on before the webhooks router fans them out. */
export const EVENTS_TOPIC = 'events';
