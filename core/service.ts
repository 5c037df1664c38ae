import type { ElysiaAdapter } from 'elysia';
import { type Config, ConfigError } from './config.ts';
import { type Capability, type CapabilityMap, createCapabilityRegistry } from './contract/capabilities.ts';
import { createHookRegistry, hooksOf } from './contract/hooks.ts';
import { readSettings } from './contract/settings.ts';
import { migrate } from './db/migrate.ts';
import { resealColumn, type SealedColumn } from './db/reseal.ts';
import { describeFailures, sampleSealed } from './db/sealed-check.ts';
import { createEventPublisher } from './events/publisher.ts';
import { healthRoutes } from './health.ts';
import { createHttpApp } from './http/app.ts';
import { orgAuth } from './http/auth.ts';
import type { DirectRoute } from './http/direct-routes.ts';
import { frontDoor } from './http/front-door.ts';
import { headerNames } from './http/headers.ts';
import type { Logger } from './log.ts';
import type { MessageCounters } from './messaging/counters.ts';
import { createMessageQueue } from './messaging/queue.ts';
import { templateFilesIn } from './messaging/template-files.ts';
import { prepareTemplate } from './messaging/templates.ts';
import { messageCounters, publishedEvents, registerQueueGauges } from './metrics/core-series.ts';
import { metricsEndpoint } from './metrics/endpoint.ts';
import { createRequestMetrics } from './metrics/http.ts';
import { createNoMetrics } from './metrics/no-op.ts';
import { createPrometheusMetrics } from './metrics/prometheus.ts';
import { migrations as coreMigrations } from './organizations/migrations/index.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { createOrganizationStore } from './organizations/store.ts';
import {
  type PluginDefinition,
  provisionsOf,
  type ServiceContext,
  type ServiceDefinition,
  type Worker,
} from './plugin.ts';
import type { Clock } from './ports/clock.ts';
import type { EventBus } from './ports/event-bus.ts';
import type { HttpDelivery } from './ports/http-delivery.ts';
import type { Messenger } from './ports/messenger.ts';
import type { OutboundRequests } from './ports/outbound-requests.ts';
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
  /** Guarded requests other than deliveries: SSO providers. */
  outbound: OutboundRequests;
  clock: Clock;
  /** The transport of messages (SMTP, or the development outbox); core's queue makes it durable. */
  messenger: Messenger;
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
  /** Where sent, retried and dropped messages are counted (the metrics seam). @default none */
  messageCounters?: MessageCounters;
}

/** Picks the plugins PLUGINS enables (all of the definition when unset); unknown ids stop start-up. */
export function selectPlugins<P extends PluginDefinition<unknown, CapabilityMap, CapabilityMap>>(
  all: readonly P[],
  wanted: readonly string[] | undefined,
): P[] {
  const ids = all.map((p) => p.id);
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (twice.length) throw new ConfigError([`service.config.ts lists plugin ${twice.join(', ')} twice`]);
  if (wanted) {
    const unknown = wanted.filter((id) => !ids.includes(id));
    if (unknown.length)
      throw new ConfigError([
        `PLUGINS names unknown plugins ${unknown.join(', ')}; known: ${ids.join(', ') || '(none)'}`,
      ]);
  }
  const enabled = wanted ? all.filter((p) => wanted.includes(p.id)) : [...all];
  return orderByCapabilities(all, enabled);
}

/**
 * Orders plugins so that each is set up after those providing what it requires; a requirement no
 * enabled plugin provides, or a cycle, stops start-up with a message naming the plugins.
 */
function orderByCapabilities<P extends PluginDefinition<unknown, CapabilityMap, CapabilityMap>>(
  all: readonly P[],
  enabled: readonly P[],
): P[] {
  const providerOf = (cap: Capability<unknown>, among: readonly P[]) =>
    among.find((p) => Object.values(p.provides ?? {}).includes(cap));
  const problems: string[] = [];
  for (const p of enabled)
    for (const cap of Object.values(p.requires ?? {}))
      if (!providerOf(cap, enabled)) {
        const elsewhere = providerOf(cap, all);
        problems.push(
          `PLUGINS enables ${p.id}, which requires the ${cap.name} capability; ${
            elsewhere
              ? `${elsewhere.id} provides it: enable ${elsewhere.id} too`
              : 'no plugin of service.config.ts provides it'
          }`,
        );
      }
  if (problems.length) throw new ConfigError(problems);
  const ordered: P[] = [];
  const visiting = new Set<P>();
  const visit = (p: P, path: string[]) => {
    if (ordered.includes(p)) return;
    if (visiting.has(p))
      throw new ConfigError([
        `plugins require each other's capabilities in a cycle: ${[...path, p.id].join(' -> ')}`,
      ]);
    visiting.add(p);
    for (const cap of Object.values(p.requires ?? {})) visit(providerOf(cap, enabled)!, [...path, p.id]);
    visiting.delete(p);
    ordered.push(p);
  };
  for (const p of enabled) visit(p, []);
  return ordered;
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
  const capabilities = createCapabilityRegistry();
  const hookRegistry = createHookRegistry();
  // Metrics are kept only when METRICS_PORT gives them somewhere to go; otherwise every series is a
  // no-op, and the code that counts runs the same either way.
  const prometheus = config.metricsPort !== undefined ? createPrometheusMetrics(log) : undefined;
  const metrics = prometheus ?? createNoMetrics();
  registerQueueGauges(metrics, ports.bus);
  const queue = createMessageQueue({
    bus: ports.bus,
    messenger: ports.messenger,
    secrets: ports.secrets,
    clock: ports.clock,
    log,
    retryWindowMs: config.mailRetryWindowMs,
    counters: messageCounters(metrics, options.messageCounters),
  });
  const templateFiles = templateFilesIn(config.mailTemplatesDir);
  const ctx: ServiceContext = {
    config,
    log,
    storage: ports.storage,
    bus: ports.bus,
    signer: ports.signer,
    secrets: ports.secrets,
    delivery: ports.delivery,
    outbound: ports.outbound,
    clock: ports.clock,
    events: createEventPublisher({
      bus: ports.bus,
      clock: ports.clock,
      log: log.child({ component: 'events' }),
      published: publishedEvents(metrics),
    }),
    metrics,
    orgs,
    headers,
    auth,
    hooks: hooksOf(hookRegistry),
    capability: (cap) => cap.from(capabilities),
    messages: {
      template: (template) => prepareTemplate(template, templateFiles),
      prepare: (message) => queue.prepare(message),
      send: (message, o) => queue.send(message, o),
      reaches: (type) => queue.reaches(type),
    },
  };
  const settings = enabled.map((plugin) => {
    const read = plugin.settings ? readSettings(plugin.settings, config.environment) : undefined;
    return { plugin, read };
  });
  const settingProblems = settings.flatMap(({ plugin, read }) =>
    read && !read.ok ? read.problems.map((p) => `${p} (a setting of the ${plugin.id} plugin)`) : [],
  );
  if (settingProblems.length) throw new ConfigError(settingProblems);

  let stopping = false;
  let draining = false;
  const app = createHttpApp({
    log,
    names: headers,
    version: options.version ?? '0.0.0',
    adapter: options.adapter,
    recordRoutes: metrics.enabled,
  })
    .use(healthRoutes(ports.storage, ports.bus, () => stopping || draining))
    .use(organizationRoutes(orgs, auth));

  const workers: Worker[] = [queue.worker];
  const direct: DirectRoute[] = [];
  const sealed: SealedColumn[] = [...(ports.sealed ?? [])];
  const declared = new Set(enabled.flatMap((p) => (p.declares ?? []).map((h) => h.name)));
  for (const { plugin, read } of settings) {
    const needs = Object.fromEntries(
      Object.entries(plugin.requires ?? {}).map(([key, cap]) => [key, cap.from(capabilities)]),
    );
    const parts = await plugin.setup({ ...ctx, settings: read?.ok ? read.settings : undefined }, needs);
    if (parts.routes) app.use(parts.routes);
    direct.push(...(parts.direct ?? []));
    workers.push(...(parts.workers ?? []));
    sealed.push(...(parts.sealed ?? []));
    const provided = parts.provide ?? {};
    const missing = Object.keys(plugin.provides ?? {}).filter((key) => !(key in provided));
    if (missing.length)
      throw new Error(
        `plugin ${plugin.id} declares ${missing.join(', ')} in provides but its setup returned no implementation`,
      );
    for (const provision of provisionsOf(plugin.provides ?? {}, provided)) provision.install(capabilities);
    for (const attachment of parts.attach ?? []) {
      attachment.install(hookRegistry, plugin.id);
      if (!declared.has(attachment.hook))
        log.info('a hook handler waits for a plugin that calls it', {
          plugin: plugin.id,
          hook: attachment.hook,
        });
    }
  }

  // A MASTER_KEY that opens none of the secrets already stored stops start-up here, with one message,
  // rather than fail each request that reads a secret later (a 500 on an attribute, a delivery without
  // its custom headers, a token key that does not load).
  const sample = await sampleSealed(ports.storage, ports.secrets, sealed);
  if (sample.failed.length > 0 && sample.opened === 0)
    throw new ConfigError([
      `MASTER_KEY does not open the secrets this database holds (${describeFailures(sample.failed)}): start with the MASTER_KEY that sealed them; during a rotation, list the new key first and the old one after it`,
    ]);
  if (sample.failed.length > 0)
    log.warn('stored secrets that do not open', { detail: describeFailures(sample.failed) });

  const door = frontDoor((request) => app.handle(request), {
    bodyLimit: config.bodyLimit,
    requestTimeoutMs: config.requestTimeoutMs,
    trustedProxyHops: config.trustedProxyHops,
    log,
    direct,
    // Without metrics the front door skips the observation altogether, the route lookup included.
    ...(metrics.enabled ? { requests: createRequestMetrics(metrics) } : {}),
  });
  const started: Worker[] = [];
  return {
    app,
    /** The app's fetch handler behind the front door (routable URL, body limit), for in-process calls. */
    fetch: (request: Request) => door(request),
    /**
     * The same for servers: `peer` is the socket's remote address, from which (with TRUSTED_PROXY_HOPS,
     * X-Forwarded-For) comes the client address `requestContextOf` answers.
     */
    fetchFrom: door,
    /**
     * The metrics listener's handler (GET /metrics, /healthz) when METRICS_PORT is set; undefined when
     * metrics are off. The entries serve it on METRICS_HOST:METRICS_PORT, never on the public port.
     */
    metricsFetch: prometheus ? metricsEndpoint(prometheus) : undefined,
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
      await ports.outbound.close().catch((err) => log.error('closing outbound requests failed', { err }));
      await ports.messenger.close().catch((err) => log.error('closing the mail transport failed', { err }));
      await ports.storage.close().catch((err) => log.error('closing storage failed', { err }));
      await ports.release?.();
    },
  };
}

export type Service = Awaited<ReturnType<typeof composeService>>;
