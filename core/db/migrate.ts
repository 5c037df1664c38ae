import { sql } from 'drizzle-orm';
import type { MigrationSet, Storage } from '../ports/storage.ts';
import { StorageError } from '../ports/storage.ts';

/** One key for every replica of this service; `pg_advisory_xact_lock` makes concurrent starts take turns. */
const MIGRATION_LOCK = sql`select pg_advisory_xact_lock(8310455712344)`;

/**
 * Applies every pending migration of the sets, in order, in one transaction under an advisory lock.
 * Idempotent: applied migrations are recorded in `_migrations` and skipped. Several replicas starting
 * at once wait for each other; the later ones find nothing left to do.
 */
export async function migrate(
  storage: Storage,
  sets: readonly MigrationSet[],
): Promise<{ applied: string[] }> {
  const names = new Set<string>();
  for (const set of sets) {
    if (names.has(set.name))
      throw new StorageError('MIGRATION_FAILED', `migration set ${set.name} is listed twice`);
    names.add(set.name);
  }
  return storage.transaction(async (tx) => {
    await tx.query(MIGRATION_LOCK);
    await tx.query(sql`create table if not exists _migrations (
      set_name text not null,
      id text not null,
      applied_at timestamptz not null default now(),
      primary key (set_name, id)
    )`);
    const rows = await tx.query<{ set_name: string; id: string }>(sql`select set_name, id from _migrations`);
    const done = new Set(rows.map((r) => `${r.set_name}/${r.id}`));
    const applied: string[] = [];
    for (const set of sets) {
      for (const m of set.migrations) {
        const key = `${set.name}/${m.id}`;
        if (done.has(key)) continue;
        try {
          for (const statement of m.statements) await tx.query(sql.raw(statement));
        } catch (cause) {
          throw new StorageError('MIGRATION_FAILED', `migration ${key} failed: ${(cause as Error).message}`, {
            cause,
          });
        }
        await tx.query(sql`insert into _migrations (set_name, id) values (${set.name}, ${m.id})`);
        applied.push(key);
      }
    }
    return { applied };
  });
}
