import type { ElysiaAdapter } from 'elysia';
import type { Config } from '../core/config.ts';
import { createLogger, type Logger } from '../core/log.ts';
import type { MessageCounters } from '../core/messaging/counters.ts';
import type { ServiceDefinition } from '../core/plugin.ts';
import { composeService, type Service } from '../core/service.ts';
import type { StartSteps } from './first-start.ts';
import { createPorts, type PortOverrides } from './ports.ts';
import { loadServiceDefinition } from './service-definition.ts';
import { VERSION } from './version.ts';

export interface CreateServiceOptions {
  log?: Logger;
  /** The plugins to compose. @default SERVICE_CONFIG's file, else service.config.ts */
  definition?: ServiceDefinition;
  overrides?: PortOverrides;
  /** Elysia's runtime adapter (Node); Bun and Deno use the web-standard default. */
  adapter?: ElysiaAdapter;
  /** Says the slow steps of a first start as they begin (the server entry passes standard error). */
  steps?: StartSteps;
  /** Where sent, retried and dropped messages are counted. @default none */
  messageCounters?: MessageCounters;
}

/**
 * Binds the ports to the adapters the configuration selects and composes the enabled plugins into one
 * Elysia app. Call `start()` to run workers and `stop()` to shut everything down.
 *
 * @example
 * const service = await createService(loadConfig(process.env));
 * await service.start();
 * service.app.listen(3000);
 */
export async function createService(config: Config, options: CreateServiceOptions = {}): Promise<Service> {
  const log = options.log ?? createLogger(config.logLevel);
  const steps = options.steps;
  if (steps?.newMasterKey) steps.say(`generating a master key into ${config.dataDir}/master.key`);
  if (steps?.freshDatabase)
    steps.say(`creating the embedded database in ${config.dataDir}/pglite (first start: a few seconds)`);
  const ports = await createPorts(config, log, options.overrides);
  if (steps?.freshDatabase) steps.say('applying migrations to the new database');
  try {
    return await composeService({
      config,
      log,
      ports,
      definition: options.definition ?? (await loadServiceDefinition(config)),
      version: VERSION,
      ...(options.adapter ? { adapter: options.adapter } : {}),
      ...(options.messageCounters ? { messageCounters: options.messageCounters } : {}),
    });
  } catch (e) {
    await ports.bus.close().catch(() => {});
    await ports.delivery.close().catch(() => {});
    await ports.messenger.close().catch(() => {});
    await ports.storage.close().catch(() => {});
    await ports.release?.();
    throw e;
  }
}
