import { migrations as localKeys } from '../../adapters/local-keys/migrations/index.ts';
import { natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { migrations as core } from '../../core/organizations/migrations/index.ts';
import serviceDefinition from '../../service.config.ts';

/** Every migration set a deployment may apply, in the order the service applies them. */
export const allMigrationSets = () => [
  core,
  localKeys,
  pgQueueMigrations,
  natsOutboxMigrations,
  ...serviceDefinition.plugins.flatMap((p) => (p.migrations ? [p.migrations] : [])),
];
