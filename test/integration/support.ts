import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { migrate } from '../../core/db/migrate.ts';
import type { MigrationSet, Storage } from '../../core/ports/storage.ts';
import { deleteStreams as deleteStreamsAt } from '../../scripts/bench/streams.ts';

/** The real services of the integration run; the defaults are those of the development machine. */
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

const run = `${Date.now().toString(36)}_${process.pid}`;
let n = 0;

/** A name no other test of this or any other run uses. */
export const unique = (what: string): string => `${what}_${run}_${++n}`;

/** A stream prefix no other test uses (stream names allow neither `.` nor spaces). */
export const uniquePrefix = (): string => `T${Date.now()}${++n}`;

/** Postgres storage on a schema of its own, migrated; `drop()` removes the schema and closes. */
export async function freshPostgres(
  sets: readonly MigrationSet[],
): Promise<{ storage: Storage; schema: string; drop(): Promise<void> }> {
  const schema = unique('it');
  const storage = await createPostgresStorage({ url: DATABASE_URL, schema, max: 8 });
  await migrate(storage, sets);
  return {
    storage,
    schema,
    async drop() {
      await storage.query(sql.raw(`drop schema if exists "${schema}" cascade`));
      await storage.close();
    },
  };
}

/** Deletes every JetStream stream of a bus's prefix. */
export const deleteStreams = (prefix: string): Promise<void> => deleteStreamsAt(NATS_URL, `${prefix}_`);

/** A schema of its own for one test, not migrated; `another()` opens a second pool on it (a replica). */
export async function isolatedPostgres(prefix = 't') {
  const schema = unique(prefix);
  const storage = await createPostgresStorage({ url: DATABASE_URL, schema, max: 10 });
  return {
    schema,
    storage,
    another: () => createPostgresStorage({ url: DATABASE_URL, schema, max: 10 }),
    async drop() {
      const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    },
  };
}
