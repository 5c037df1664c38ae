import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { drizzleOps } from '../../core/db/transactions.ts';
import type { Database, Storage } from '../../core/ports/storage.ts';
import { firstContact } from './startup.ts';

export { redact } from './startup.ts';

export interface PostgresOptions {
  url: string;
  /** A schema to create (if missing) and use for every table; isolates tests and tenants of one database. */
  schema?: string;
  /** Connections in the pool. @default 20 */
  max?: number;
  /**
   * How long start-up waits for the first answer from Postgres (schema ready and one query) before it gives up,
   * so an endpoint that is not Postgres stops start-up instead of holding it forever. @default 10_000
   */
  connectDeadlineMs?: number;
}

/** Storage on Postgres through postgres.js: for many stateless replicas sharing one database. */
export async function createPostgresStorage(
  options: PostgresOptions,
): Promise<Storage & { client: postgres.Sql }> {
  const deadlineMs = options.connectDeadlineMs ?? 10_000;
  if (!Number.isFinite(deadlineMs) || deadlineMs <= 0) {
    throw new TypeError(`connectDeadlineMs must be a positive number of milliseconds, not ${deadlineMs}`);
  }
  // search_path may name a schema that does not exist yet: Postgres resolves it again once firstContact creates it.
  const max = options.max ?? 20;
  const client = postgres(options.url, {
    onnotice: () => {},
    max,
    connect_timeout: 10,
    ...(options.schema ? { connection: { search_path: options.schema } } : {}),
  });
  await firstContact(client, { url: options.url, schema: options.schema, deadlineMs });
  const db = drizzle({ client }) as unknown as Database;
  return {
    kind: 'postgres',
    writeConcurrency: max,
    client,
    db,
    ...drizzleOps(db, (result) => result as unknown[]),
    async listen(channel, handler) {
      const sub = await client.listen(channel, handler);
      return async () => {
        await sub.unlisten();
      };
    },
    async ping() {
      await client`select 1`;
    },
    async close() {
      await client.end({ timeout: 5 });
    },
  };
}
