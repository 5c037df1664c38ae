import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { drizzleOps } from '../../core/db/transactions.ts';
import type { Database, Storage } from '../../core/ports/storage.ts';
import { StorageError } from '../../core/ports/storage.ts';

export interface PostgresOptions {
  url: string;
  /** A schema to create (if missing) and use for every table; isolates tests and tenants of one database. */
  schema?: string;
  /** Connections in the pool. @default 20 */
  max?: number;
}

/** Storage on Postgres through postgres.js: for many stateless replicas sharing one database. */
export async function createPostgresStorage(
  options: PostgresOptions,
): Promise<Storage & { client: postgres.Sql }> {
  const base = { onnotice: () => {}, max: options.max ?? 20, connect_timeout: 10 } as const;
  if (options.schema) {
    const admin = postgres(options.url, { ...base, max: 1 });
    try {
      await admin.unsafe(`create schema if not exists "${options.schema}"`);
    } catch (cause) {
      throw new StorageError(
        'UNAVAILABLE',
        `cannot reach Postgres at ${redact(options.url)}: ${(cause as Error).message}`,
        { cause },
      );
    } finally {
      await admin.end();
    }
  }
  const client = postgres(options.url, {
    ...base,
    ...(options.schema ? { connection: { search_path: options.schema } } : {}),
  });
  try {
    await client`select 1`;
  } catch (cause) {
    await client.end({ timeout: 1 });
    throw new StorageError(
      'UNAVAILABLE',
      `cannot reach Postgres at ${redact(options.url)}: ${(cause as Error).message}`,
      { cause },
    );
  }
  const db = drizzle({ client }) as unknown as Database;
  return {
    kind: 'postgres',
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

/** Hides the password of a connection URL in messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured DATABASE_URL';
  }
}
