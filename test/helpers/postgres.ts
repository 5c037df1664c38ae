import postgres from 'postgres';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A schema of its own for one test, dropped by `drop()`. */
export async function isolatedPostgres(prefix = 't') {
  const schema = `${prefix}_${crypto.randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const storage = await createPostgresStorage({ url: DATABASE_URL, schema, max: 10 });
  return {
    schema,
    storage,
    /** Another pool on the same schema: a second replica. */
    another: () => createPostgresStorage({ url: DATABASE_URL, schema, max: 10 }),
    async drop() {
      const admin = postgres(DATABASE_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop schema if exists "${schema}" cascade`);
      await admin.end();
    },
  };
}
