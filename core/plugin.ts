import type { AnyElysia } from 'elysia';
import type { Config } from './config.ts';
import type { SealedColumn } from './db/reseal.ts';
import type { EventPublisher } from './events/types.ts';
import type { OrgAuth } from './http/auth.ts';
import type { HeaderNames } from './http/headers.ts';
import type { Logger } from './log.ts';
import type { OrganizationStore } from './organizations/store.ts';
import type { Clock } from './ports/clock.ts';
import type { EventBus } from './ports/event-bus.ts';
import type { HttpDelivery } from './ports/http-delivery.ts';
import type { SecretBox } from './ports/secret-box.ts';
import type { Signer } from './ports/signer.ts';
import type { MigrationSet, Storage } from './ports/storage.ts';

/** A typed name for something one plugin offers others (a port-like interface, never its tables). */
export interface Capability<T> {
  readonly name: string;
  /** Phantom field that carries the type. */
  readonly __type?: T;
}
export const defineCapability = <T>(name: string): Capability<T> => ({ name });

/** What every plugin receives: the ports, configuration, and the shared HTTP pieces. */
export interface ServiceContext {
  readonly config: Config;
  readonly log: Logger;
  readonly storage: Storage;
  readonly bus: EventBus;
  readonly signer: Signer;
  readonly secrets: SecretBox;
  readonly delivery: HttpDelivery;
  readonly clock: Clock;
  /** Publishes catalogue events on the bus: `ctx.events.publish(orgId, 'RoleDeleted_v1', members, { tx })`. */
  readonly events: EventPublisher;
  readonly orgs: OrganizationStore;
  readonly headers: HeaderNames;
  /** The organization guard: `.use(ctx.auth)`, then `{ apiKey: true }` or `{ orgOnly: true }` on a route. */
  readonly auth: OrgAuth;
  /** Looks up a capability another plugin provides; undefined when that plugin is disabled. */
  capability<T>(cap: Capability<T>): T | undefined;
}

/** A background loop owned by a plugin: started after migrations, stopped on shutdown. */
export interface Worker {
  readonly name: string;
  start(): void | Promise<void>;
  /** Stops taking new work and finishes what is in flight. */
  stop(): Promise<void>;
}

export interface PluginParts {
  routes?: AnyElysia;
  workers?: Worker[];
  /** Capabilities this plugin offers the others. */
  provides?: Array<readonly [Capability<unknown>, unknown]>;
  /** Columns of values sealed by the SecretBox, which `secrets reseal` seals again with the current key. */
  sealed?: SealedColumn[];
}

export interface PluginDefinition {
  /** Kebab-case id: names the folder, the PLUGINS entry and the migration set. */
  readonly id: string;
  readonly migrations?: MigrationSet;
  /** Versioned names of the events this plugin emits. */
  readonly emits?: readonly string[];
  /** Ids of plugins that must be enabled with this one. */
  readonly requires?: readonly string[];
  setup(ctx: ServiceContext): PluginParts | Promise<PluginParts>;
}

/**
 * Declares a plugin: its tables and migrations, its routes, the events it emits and its workers.
 *
 * @example
 * export const hello = (options: { greeting?: string } = {}) =>
 *   definePlugin({
 *     id: 'hello',
 *     setup: (ctx) => ({ routes: new Elysia().use(ctx.auth).get('/hello', () => ok(options.greeting ?? 'hi'), { apiKey: true }) }),
 *   });
 */
export const definePlugin = <const P extends PluginDefinition>(plugin: P): P => plugin;

export const providing = <T>(cap: Capability<T>, impl: T): readonly [Capability<unknown>, unknown] => [
  cap,
  impl,
];

/** The deployment: which plugins run. `service.config.ts` default-exports one. */
export interface ServiceDefinition {
  plugins: PluginDefinition[];
}
export const defineService = (def: ServiceDefinition): ServiceDefinition => def;
