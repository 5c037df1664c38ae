import type { ElysiaAdapter } from 'elysia';
import { DataDirLockedError } from '../adapters/pglite/lock.ts';
import { type Config, ConfigError, loadConfig } from '../core/config.ts';
import { createLogger, type Logger } from '../core/log.ts';
import { StorageError } from '../core/ports/storage.ts';
import type { Service } from '../core/service.ts';
import { createService } from './create-service.ts';
import { ensureDevOrganization } from './dev-organization.ts';
import { checkPortFree, startSteps } from './first-start.ts';
import { isWorkerProcess, reportListening, superviseWorkers, workerIndex } from './workers.ts';

export type Runtime = 'bun' | 'node' | 'deno';

/** A handler as the servers call it: the request and the socket's remote address. */
export type PeerFetch = (request: Request, peer?: string) => Promise<Response>;

/** A server listening: its port, and how to stop it (requests in flight end first). */
export interface Listening {
  port: number;
  close(): Promise<void>;
}

/** Where to listen; `shared`: with sibling processes on the same port (SO_REUSEPORT, Node's cluster). */
export interface ListenAt {
  host: string;
  port: number;
  shared?: boolean;
}

/**
 * What a runtime entry provides: how to serve a handler on a host and port (the API on HOST:PORT, the
 * metrics on METRICS_HOST:METRICS_PORT), with the server settings of `config`.
 */
export interface Listener {
  listen(fetch: PeerFetch, at: ListenAt, config: Config): Promise<Listening>;
  adapter?: ElysiaAdapter;
}

/**
 * The metrics port of a process: METRICS_PORT, and with WORKERS the next ones, one for each worker
 * (worker `i` on METRICS_PORT + i), since each worker keeps its own metrics and is scraped as a target
 * of its own. 0 stays 0: each a free port.
 */
const metricsPortOf = (config: Config, worker: number): number =>
  config.metricsPort === 0 || config.metricsPort === undefined ? 0 : config.metricsPort + worker;

const fail = (message: string): never => {
  console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), msg: message }));
  process.exit(1);
};

/**
 * Starts the service on a runtime: reads the configuration once, composes the service, creates the
 * development organization on a fresh embedded database, starts workers, listens, and shuts down
 * gracefully on SIGINT or SIGTERM (stop accepting, finish requests in flight, stop consumers, close).
 */
export async function serve(runtime: Runtime, listener: Listener): Promise<void> {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (e) {
    return fail(e instanceof ConfigError ? e.message : String(e));
  }
  const worker = workerIndex();
  const log: Logger = createLogger(config.logLevel, worker === undefined ? { runtime } : { runtime, worker });
  // Before anything is made on disk: a busy port is one clear line, not a data directory left behind.
  // (A worker's port is its siblings' too, and its metrics port one of theirs: the supervisor checked them.)
  if (!isWorkerProcess())
    try {
      await checkPortFree(config.host, config.port);
      if (config.metricsPort !== undefined)
        for (let i = 0; i < config.workers; i++)
          await checkPortFree(config.metricsHost, metricsPortOf(config, i), 'METRICS_PORT');
    } catch (e) {
      return fail((e as Error).message);
    }
  if (config.workers > 1 && !isWorkerProcess()) {
    if (runtime === 'deno')
      return fail(
        `WORKERS=${config.workers} runs on Bun and Node; on Deno set WORKERS=1 and run one process per core behind a proxy`,
      );
    await superviseWorkers({ workers: config.workers, log });
  }
  const steps = startSteps(config);
  let service: Service;
  try {
    service = await createService(config, {
      log,
      steps,
      ...(listener.adapter ? { adapter: listener.adapter } : {}),
    });
  } catch (e) {
    if (e instanceof ConfigError || e instanceof DataDirLockedError || e instanceof StorageError)
      return fail(e.message);
    // One clean line for the operator; the stack only when LOG_LEVEL=debug asks for it.
    log.debug('start-up failed', { err: e });
    return fail(`start-up failed: ${(e as Error).message}`);
  }
  // Listen first: a port in use stops here, before workers start and before a development key is
  // printed "this once" for a server that never ran.
  let server: Listening;
  try {
    // With WORKERS, every worker listens on the one public port; the kernel spreads connections.
    const at = { host: config.host, port: config.port, shared: config.workers > 1 };
    server = await listener.listen(service.fetchFrom, at, config);
  } catch (e) {
    await service.stop().catch(() => {});
    return fail(`cannot listen on ${config.host}:${config.port}: ${(e as Error).message}`);
  }
  // Metrics on a listener of their own (METRICS_PORT), never on the public one.
  let metricsServer: Listening | undefined;
  if (service.metricsFetch && config.metricsPort !== undefined) {
    const at = { host: config.metricsHost, port: metricsPortOf(config, worker ?? 0) };
    try {
      metricsServer = await listener.listen(service.metricsFetch, at, config);
    } catch (e) {
      await server.close().catch(() => {});
      await service.stop().catch(() => {});
      return fail(`cannot listen on ${at.host}:${at.port} (METRICS_PORT): ${(e as Error).message}`);
    }
  }
  await service.start();
  reportListening();
  if (steps.freshDatabase && config.env !== 'production')
    steps.say('creating the development organization and its API key');
  await ensureDevOrganization(service, config, log);
  log.info('listening', {
    url: `http://${config.host}:${server.port}`,
    public_base_url: config.publicBaseUrl,
    storage: service.ctx.storage.kind,
    bus: service.ctx.bus.kind,
    plugins: service.plugins,
    ...(metricsServer ? { metrics_url: `http://${config.metricsHost}:${metricsServer.port}/metrics` } : {}),
  });

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) {
      log.warn('second signal: exiting now', { signal });
      process.exit(1);
    }
    shuttingDown = true;
    log.info('shutting down', { signal });
    // Not ready at once; keep serving for the drain, so a load balancer can take the replica out first.
    service.drain();
    if (config.shutdownDrainMs > 0) await new Promise((r) => setTimeout(r, config.shutdownDrainMs));
    const force = setTimeout(() => {
      log.error('shutdown took too long; exiting', { timeout_ms: config.shutdownTimeoutMs });
      process.exit(1);
    }, config.shutdownTimeoutMs);
    try {
      await server.close();
      await service.stop();
      // Last: the metrics of the drain and the shutdown stay readable until the end.
      await metricsServer?.close();
    } catch (err) {
      log.error('shutdown failed', { err });
      process.exit(1);
    }
    clearTimeout(force);
    log.info('stopped');
    process.exit(0);
  };
  // A worker stops on the supervisor's SIGTERM; the terminal's Ctrl-C reaches the supervisor, which sends it.
  if (isWorkerProcess()) process.on('SIGINT', () => {});
  else process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
