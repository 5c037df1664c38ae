import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Config, ConfigError } from '../core/config.ts';
import type { ServiceDefinition } from '../core/plugin.ts';
import repositoryDefinition from '../service.config.ts';

const isDefinition = (value: unknown): value is ServiceDefinition =>
  typeof value === 'object' && value !== null && 'plugins' in value && Array.isArray(value.plugins);

/**
 * The deployment to compose: the file SERVICE_CONFIG names (relative to the working directory), whose
 * default export is `defineService({ plugins: [...] })`, else the repository's service.config.ts.
 */
export async function loadServiceDefinition(config: Config): Promise<ServiceDefinition> {
  if (!config.serviceConfig) return repositoryDefinition;
  const path = isAbsolute(config.serviceConfig) ? config.serviceConfig : resolve(config.serviceConfig);
  let loaded: { default?: unknown };
  try {
    loaded = await import(pathToFileURL(path).href);
  } catch (err) {
    throw new ConfigError([`SERVICE_CONFIG names ${path}, which does not load: ${(err as Error).message}`]);
  }
  if (!isDefinition(loaded.default))
    throw new ConfigError([
      `SERVICE_CONFIG names ${path}, whose default export is not defineService({ plugins: [...] })`,
    ]);
  return loaded.default;
}
