import * as localKeys from '../adapters/local-keys/schema.ts';
import * as natsOutbox from '../adapters/nats/schema.ts';
import * as pgQueue from '../adapters/pg-queue/schema.ts';
import * as organizations from '../core/organizations/schema.ts';
import * as attributes from '../plugins/attributes/schema.ts';
import * as webhooks from '../plugins/webhooks/schema.ts';

/** Every drizzle schema that owns tables, and the folder its generated migrations live in. */
export const migrationSources: Array<{ name: string; dir: string; schema: Record<string, unknown> }> = [
  { name: 'core', dir: 'core/organizations/migrations', schema: organizations },
  { name: 'local-keys', dir: 'adapters/local-keys/migrations', schema: localKeys },
  { name: 'pg-queue', dir: 'adapters/pg-queue/migrations', schema: pgQueue },
  { name: 'nats-outbox', dir: 'adapters/nats/migrations', schema: natsOutbox },
  { name: 'attributes', dir: 'plugins/attributes/migrations', schema: attributes },
  { name: 'webhooks', dir: 'plugins/webhooks/migrations', schema: webhooks },
];
