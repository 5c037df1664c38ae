import type { ElysiaAdapter } from 'elysia';
import { type Config, ConfigError } from './config.ts';
import { migrate } from './db/migrate.ts';
import { resealColumn, type SealedColumn } from './db/reseal.ts';
import { createEventPublisher } from './events/publisher.ts';
import { healthRoutes } from './health.ts';
import { createHttpApp } from './http/app.ts';
import { orgAuth } from './http/auth.ts';
import { frontDoor } from './http/front-door.ts';
import { headerNames } from './http/headers.ts';
import type { Logger } from './log.ts';
import { migrations as coreMigrations } from './organizations/migrations/index.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { createOrganizationStore } from './organizations/store.ts';
import type { PluginDefinition, ServiceContext, ServiceDefinition, Worker } from './plugin.ts';
import type { Clock } from './ports/clock.ts';
import type { EventBus } from './ports/event-bus.ts';
import type { HttpDelivery } from './ports/http-delivery.ts';
import type { SecretBox } from './ports/secret-box.ts';
import type { Signer } from './ports/signer.ts';
import type { MigrationSet, Storage } from './ports/storage.ts';

/** The ports bound to adapters, and the migration sets those adapters own. */
export interface Ports {
  storage: Storage;
  bus: EventBus;
  signer: Signer;
  secrets: SecretBox;
  delivery: HttpDelivery;
  clock: Clock;
  migrations: MigrationSet[];
  /** Columns the adapters keep sealed by the SecretBox (the signer's private keys, for example). */
  sealed?: SealedColumn[];
  /** Releases what the adapters hold beyond the ports (locks, files). */
  release?: () => Promise<void>;
}

export interface ComposeOptions {
  config: Config;
  log: Logger;
  ports: Ports;
  definition: ServiceDefinition;
  version?: string;
  adapter?: ElysiaAdapter;
}

/** Picks the plugins PLUGINS enables (all of the definition when unset); unknown ids stop start-up. */
export function selectPlugins(
  all: readonly PluginDefinition[],
  wanted: readonly string[] | undefined,
): PluginDefinition[] {
  const ids = all.map((p) => p.id);
  if (wanted) {
    const unknown = wanted.filter((id) => !ids.includes(id));
    if (unknown.length)
      throw new ConfigError([
        `PLUGINS names unknown plugins ${unknown.join(', ')}; known: ${ids.join(', ') || '(none)'}`,
      ]);
  }
  const enabled = wanted ? all.filter((p) => wanted.includes(p.id)) : [...all];
  const on = new Set(enabled.map((p) => p.id));
  for (const p of enabled) {
    const missing = (p.requires ?? []).filter((r) => !on.has(r));
    if (missing.length)
      throw new ConfigError([`PLUGINS enables ${p.id}, which needs ${missing.join(', ')} enabled too`]);
  }
  return enabled;
}

/**
 * Composes the service: runs every migration, sets up the enabled plugins and mounts their routes on
 * one Elysia app with the HTTP conventions. Start the workers with `start()`, stop all with `stop()`.
 */
export async function composeService(options: ComposeOptions) {
  const { config, log, ports } = options;
  const enabled = selectPlugins(options.definition.plugins, config.plugins);
  const sets = [
    coreMigrations,
    ...ports.migrations,
    ...enabled.flatMap((p) => (p.migrations ? [p.migrations] : [])),
  ];
  const { applied } = await migrate(ports.storage, sets);
  if (applied.length) log.info('migrations applied', { applied });

  const orgs = createOrganizationStore(ports.storage, ports.clock);
  const headers = headerNames(config.headerPrefix);
  const auth = orgAuth({ orgs, names: headers, seed: crypto.randomUUID() });
  const capabilities = new Map<string, unknown>();
  const ctx: ServiceContext = {
    config,
    log,
    storage: ports.storage,
    bus: ports.bus,
    signer: ports.signer,
    secrets: ports.secrets,
    delivery: ports.delivery,
    clock: ports.clock,
    events: createEventPublisher({
      bus: ports.bus,
      clock: ports.clock,
      log: log.child({ component: 'events' }),
    }),
    orgs,
    headers,
    auth,
    capability: (cap) => capabilities.get(cap.name) as never,
  };

  let stopping = false;
  let draining = false;
  const app = createHttpApp({
    log,
    names: headers,
    version: options.version ?? '0.0.0',
    adapter: options.adapter,
  })
    .use(healthRoutes(ports.storage, ports.bus, () => stopping || draining))
    .use(organizationRoutes(orgs, auth));

  const workers: Worker[] = [];
  const sealed: SealedColumn[] = [...(ports.sealed ?? [])];
  for (const plugin of enabled) {
    const parts = await plugin.setup(ctx);
    if (parts.routes) app.use(parts.routes);
    workers.push(...(parts.workers ?? []));
    sealed.push(...(parts.sealed ?? []));
    for (const [cap, impl] of parts.provides ?? []) capabilities.set(cap.name, impl);
  }

  const started: Worker[] = [];
  return {
    app,
    /** The app's fetch handler behind the front door (routable URL, body limit): what servers and tests call. */
    fetch: frontDoor((request) => app.handle(request), {
      bodyLimit: config.bodyLimit,
      requestTimeoutMs: config.requestTimeoutMs,
      log,
    }),
    ctx,
    plugins: enabled.map((p) => p.id),
    workers,
    async start() {
      for (const w of workers) {
        await w.start();
        started.push(w);
      }
    },
    /**
     * Seals again with the current master key every value sealed with an older one, in every sealed
     * column of the adapters and the enabled plugins; returns how many per column. Afterwards the older
     * keys can be taken out of MASTER_KEY (a disabled plugin's columns are not visited: enable it first).
     */
    async reseal(): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      for (const column of sealed)
        counts[column.name] = await resealColumn(ports.storage, ports.secrets, column);
      return counts;
    },
    /**
     * The start of a graceful shutdown: /readyz answers 503 from now on, so load balancers stop sending
     * requests, while the service goes on serving those that still come.
     */
    drain() {
      draining = true;
    },
    /** Stops workers (their in-flight work finishes), then closes the ports. */
    async stop() {
      if (stopping) return;
      stopping = true;
      for (const w of started.reverse()) {
        try {
          await w.stop();
        } catch (err) {
          log.error('worker did not stop cleanly', { worker: w.name, err });
        }
      }
      await ports.bus.close().catch((err) => log.error('closing the bus failed', { err }));
      await ports.delivery.close().catch((err) => log.error('closing delivery failed', { err }));
      await ports.storage.close().catch((err) => log.error('closing storage failed', { err }));
      await ports.release?.();
    },
  };
}

export type Service = Awaited<ReturnType<typeof composeService>>;
