import type { SQL } from 'drizzle-orm';
import type { Database, Transaction } from '../ports/storage.ts';

/**
 * The query and transaction half of a Storage adapter, shared by the drivers: they differ only in how
 * a raw result carries its rows.
 */
export function drizzleOps(db: Database, rowsOf: (result: unknown) => unknown[]) {
  return {
    async query<R>(statement: SQL): Promise<R[]> {
      return rowsOf(await db.execute(statement)) as R[];
    },
    async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      const hooks: Array<() => void> = [];
      const result = await db.transaction(async (inner) => {
        const txDb = inner as unknown as Database;
        return fn({
          db: txDb,
          query: async <R>(statement: SQL) => rowsOf(await txDb.execute(statement)) as R[],
          afterCommit: (hook) => void hooks.push(hook),
        });
      });
      for (const hook of hooks) hook();
      return result;
    },
  };
}
