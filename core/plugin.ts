import type { AnyElysia } from 'elysia';
import type { Config } from './config.ts';
import type { Capability, CapabilityMap, Implementations, Provision } from './contract/capabilities.ts';
import type { HookAttachment, HookPoint, Hooks } from './contract/hooks.ts';
import type { SettingsSchema } from './contract/settings.ts';
import type { SealedColumn } from './db/reseal.ts';
import type { EventName, EventPublisher } from './events/types.ts';
import type { OrgAuth } from './http/auth.ts';
import type { DirectRoute } from './http/direct-routes.ts';
import type { HeaderNames } from './http/headers.ts';
import type { Logger } from './log.ts';
import type { Messages } from './messaging/messages.ts';
import type { Metrics } from './metrics/types.ts';
import type { OrganizationStore } from './organizations/store.ts';
import type { Clock } from './ports/clock.ts';
import type { EventBus } from './ports/event-bus.ts';
import type { HttpDelivery } from './ports/http-delivery.ts';
import type { OutboundRequests } from './ports/outbound-requests.ts';
import type { SecretBox } from './ports/secret-box.ts';
import type { Signer } from './ports/signer.ts';
import type { MigrationSet, Storage } from './ports/storage.ts';

export { type Capability, defineCapability, type Provision } from './contract/capabilities.ts';
export {
  defineHook,
  type HookAttachment,
  type HookHandler,
  type HookPoint,
  type Hooks,
} from './contract/hooks.ts';

/** What every plugin receives: the ports, configuration, and the shared HTTP pieces. */
export interface ServiceContext {
  readonly config: Config;
  readonly log: Logger;
  readonly storage: Storage;
  readonly bus: EventBus;
  readonly signer: Signer;
  readonly secrets: SecretBox;
  readonly delivery: HttpDelivery;
  /**
   * Guarded fetches for requests to addresses a tenant chose (SSO providers: `outbound.sso`; clients'
   * `jwks_uri`: `outbound.clientJwks`): https only,
   * every resolved address vetted and pinned, no redirects, a generic error for the tenant.
   */
  readonly outbound: Pick<OutboundRequests, 'sso' | 'clientJwks'>;
  readonly clock: Clock;
  /** Publishes catalogue events on the bus, typed by name: `ctx.events.publish(orgId, 'RoleDeleted_v1', { role_name }, { tx })`. */
  readonly events: EventPublisher;
  readonly orgs: OrganizationStore;
  readonly headers: HeaderNames;
  /** The organization guard: `.use(ctx.auth)`, then `{ apiKey: true }` or `{ orgOnly: true }` on a route. */
  readonly auth: OrgAuth;
  /** Runs hook points: the results of the handlers other plugins attached, in order. */
  readonly hooks: Hooks;
  /** An optional capability: its implementation, or undefined when no enabled plugin provides it. */
  capability<T>(cap: Capability<T>): T | undefined;
  /** Messages to people: templates and durable sending (SMTP, or the development outbox). */
  readonly messages: Messages;
  /**
   * Counters, histograms and gauges with fixed label names, served in the Prometheus format on
   * METRICS_PORT (no-ops when it is unset). Make them in setup, take their series once, count on the way.
   */
  readonly metrics: Metrics;
}

/** The context of one plugin: the service's, plus that plugin's own settings. */
export interface PluginContext<S> extends ServiceContext {
  /** The plugin's settings, read from the environment through its `settings` schema. */
  readonly settings: S;
}

/** A background loop owned by a plugin: started after migrations, stopped on shutdown. */
export interface Worker {
  readonly name: string;
  start(): void | Promise<void>;
  /** Stops taking new work and finishes what is in flight. */
  stop(): Promise<void>;
}

/** What `setup` returns. */
export interface PluginParts<P extends CapabilityMap = CapabilityMap> {
  routes?: AnyElysia;
  /**
   * Hot routes the front door answers ahead of the app's router and hooks (see `DirectRoute`); each
   * also belongs in `routes`, which documents it and takes the requests a direct route does not.
   */
  direct?: DirectRoute[];
  workers?: Worker[];
  /** The implementations of the capabilities the plugin declares in `provides`, under the same keys. */
  provide?: Implementations<P>;
  /** Handlers attached to other plugins' hook points: `[beforeTokenIssued.attach({ run })]`. */
  attach?: HookAttachment[];
  /** Columns of values sealed by the SecretBox, which `secrets reseal` seals again with the current key. */
  sealed?: SealedColumn[];
}

/** A plugin: what `definePlugin` takes and returns. */
export interface PluginDefinition<
  S = unknown,
  P extends CapabilityMap = CapabilityMap,
  R extends CapabilityMap = CapabilityMap,
> {
  /** Kebab-case id: names the folder, the PLUGINS entry and, by default, the migration set. */
  readonly id: string;
  /** The plugin's tables: the migration set generated from its drizzle schema (`npm run db:generate`). */
  readonly migrations?: MigrationSet;
  /** Its settings from the environment (`envInteger`, `envRate`, ... from core); problems stop start-up. */
  readonly settings?: SettingsSchema<S>;
  /** Versioned names of the catalogue events it publishes. */
  readonly emits?: readonly EventName[];
  /** Capabilities it offers, by key; `setup` returns their implementations in `provide`. */
  readonly provides?: P;
  /** Capabilities it needs, by key; start-up fails when no enabled plugin provides one. */
  readonly requires?: R;
  /** Hook points it calls (for start-up checks and the docs); others attach handlers to them. */
  readonly declares?: readonly HookPoint<never, unknown>[];
  setup(ctx: PluginContext<S>, needs: Implementations<R>): PluginParts<P> | Promise<PluginParts<P>>;
}

/**
 * Declares a plugin: its tables and migrations, settings, routes, the events it emits, the capabilities
 * it provides and requires, the hooks it declares and attaches to, and its workers. Everything is typed:
 * `needs` carries the required capabilities' types, `provide` must match the declared ones.
 *
 * @example
 * export const greeter = defineCapability<{ greet(name: string): string }>('greeter');
 * export const hello = (options: { greeting?: string } = {}) =>
 *   definePlugin({
 *     id: 'hello',
 *     provides: { greeter },
 *     setup: (ctx) => ({
 *       routes: new Elysia().use(ctx.auth).get('/hello', () => ok(options.greeting ?? 'hi'), { apiKey: true }),
 *       provide: { greeter: { greet: (name) => `${options.greeting ?? 'hi'} ${name}` } },
 *     }),
 *   });
 */
export const definePlugin = <
  S = undefined,
  const P extends CapabilityMap = Record<never, never>,
  const R extends CapabilityMap = Record<never, never>,
>(
  plugin: PluginDefinition<S, P, R>,
): PluginDefinition<S, P, R> => plugin;

/** The deployment: which plugins run. `service.config.ts` default-exports one. */
export interface ServiceDefinition {
  plugins: PluginDefinition<unknown, CapabilityMap, CapabilityMap>[];
}
export const defineService = (def: ServiceDefinition): ServiceDefinition => def;

/** Binds implementations to capabilities (what the core does with a plugin's `provide`). */
export const provisionsOf = (declared: CapabilityMap, impls: Record<string, unknown>): Provision[] =>
  Object.entries(declared).flatMap(([key, cap]) => (key in impls ? [cap.provide(impls[key])] : []));
