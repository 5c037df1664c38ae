import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { drizzleOps } from '../../core/db/transactions.ts';
import type { Database, Storage } from '../../core/ports/storage.ts';
import { StorageError } from '../../core/ports/storage.ts';
import { DRIZZLE_PARSERS, forDrizzle } from './parsers.ts';

export interface PgliteOptions {
  /** A directory on disk; absent means in memory. */
  dataDir?: string;
  /** A data directory dumped with `dumpDataDir`, loaded instead of running initdb (fast test start-up). */
  loadDataDir?: Blob;
}

/**
 * Storage on PGlite, the embedded WASM Postgres: nothing to install. One process owns a data directory
 * at a time, and queries run one after another on its single connection.
 */
export async function createPgliteStorage(
  options: PgliteOptions = {},
): Promise<Storage & { client: PGlite }> {
  let client: PGlite;
  try {
    client = await PGlite.create({
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      parsers: DRIZZLE_PARSERS,
    });
  } catch (cause) {
    throw new StorageError(
      'UNAVAILABLE',
      `cannot open the embedded database${options.dataDir ? ` in ${options.dataDir}` : ''}: ${(cause as Error).message}`,
      { cause },
    );
  }
  const db = drizzle({ client: forDrizzle(client) }) as unknown as Database;
  let closed = false;
  return {
    kind: 'pglite',
    writeConcurrency: 1,
    client,
    db,
    ...drizzleOps(db, (result) => (result as { rows: unknown[] }).rows),
    async listen(channel, handler) {
      const unsubscribe = await client.listen(channel, handler);
      return async () => {
        if (!closed) await unsubscribe();
      };
    },
    async ping() {
      await client.query('select 1');
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
