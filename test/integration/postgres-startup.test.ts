import { afterAll, describe, expect, it } from 'bun:test';
import { createServer, type Server } from 'node:net';
import postgres from 'postgres';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { StorageError } from '../../core/ports/storage.ts';
import { DATABASE_URL, unique } from './support.ts';

const admin = postgres(DATABASE_URL, { max: 2, onnotice: () => {} });
afterAll(() => admin.end());

/** Start-up against `url`, expected to fail: the error and how long it took. */
async function failedStart(url: string, extra: { schema?: string; connectDeadlineMs?: number } = {}) {
  const started = performance.now();
  const error = await createPostgresStorage({ url, ...extra }).then(
    async (storage) => {
      await storage.close();
      throw new Error('start-up succeeded');
    },
    (e: unknown) => e,
  );
  return { error: error as StorageError, ms: performance.now() - started };
}

/** A URL of `admin`'s database as `role`, with no password (the server trusts loopback). */
const urlAs = (role: string): string => {
  const u = new URL(DATABASE_URL);
  u.username = role;
  u.password = '';
  return u.toString();
};

describe('start-up against an endpoint that is not Postgres', () => {
  const deadline = 1000;
  const slack = 2000;

  it('gives up on an HTTP server within the deadline and says it did not answer as Postgres', async () => {
    const http = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('hi') });
    try {
      const url = `postgres://postgres:hunter2@127.0.0.1:${http.port}/test`;
      const { error, ms } = await failedStart(url, { connectDeadlineMs: deadline, schema: unique('http') });
      expect(error).toBeInstanceOf(StorageError);
      expect(error.code).toBe('UNAVAILABLE');
      expect(error.message).toContain(`127.0.0.1:${http.port} did not answer as Postgres within 1 s`);
      expect(error.message).not.toContain('hunter2');
      expect(ms).toBeGreaterThanOrEqual(deadline - 50);
      expect(ms).toBeLessThan(deadline + slack);
    } finally {
      await http.stop(true);
    }
  });

  it('gives up on a server that accepts and closes at once, and stops connecting to it', async () => {
    let accepted = 0;
    const server: Server = createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const { error, ms } = await failedStart(`postgres://postgres@127.0.0.1:${port}/test`, {
        connectDeadlineMs: deadline,
      });
      expect(error).toBeInstanceOf(StorageError);
      expect(error.message).toContain(`127.0.0.1:${port} did not answer as Postgres within 1 s`);
      expect(ms).toBeLessThan(deadline + slack);
      // The pool is ended, not left reconnecting in the background (one attempt may still be in flight).
      await Bun.sleep(100);
      const after = accepted;
      await Bun.sleep(500);
      expect(accepted).toBe(after);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a deadline that is not a positive number', async () => {
    await expect(createPostgresStorage({ url: DATABASE_URL, connectDeadlineMs: 0 })).rejects.toThrow(
      'connectDeadlineMs must be a positive number',
    );
  });
});

describe('start-up with a schema', () => {
  it('lets eight replicas start together on a schema none of them finds', async () => {
    // One round loses the race between check and create only now and then; twenty make it near certain.
    for (let round = 0; round < 20; round++) {
      const schema = unique('race');
      try {
        // Settled, not all: a failed start must not leave the others running past the drop below.
        const starts = await Promise.allSettled(
          Array.from({ length: 8 }, () => createPostgresStorage({ url: DATABASE_URL, schema, max: 1 })),
        );
        const storages = starts.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
        try {
          expect(starts.flatMap((s) => (s.status === 'rejected' ? [String(s.reason)] : []))).toEqual([]);
          // Each pool's one connection began before the schema existed; its tables still land in the schema.
          await Promise.all(storages.map((s, i) => s.client.unsafe(`create table t${i} (x int)`)));
          const tables = await admin`select count(*)::int as n from pg_tables where schemaname = ${schema}`;
          expect(tables[0]?.n).toBe(8);
        } finally {
          await Promise.all(storages.map((s) => s.close()));
        }
      } finally {
        await admin`drop schema if exists ${admin(schema)} cascade`;
      }
    }
  });

  describe('as a role without CREATE on the database', () => {
    const role = unique('owner');
    const owned = unique('owned');

    afterAll(async () => {
      await admin`drop schema if exists ${admin(owned)} cascade`;
      await admin`drop role if exists ${admin(role)}`;
    });

    it('starts on a schema made for it beforehand, and writes there', async () => {
      await admin`create role ${admin(role)} login`;
      await admin`create schema ${admin(owned)} authorization ${admin(role)}`;
      const storage = await createPostgresStorage({ url: urlAs(role), schema: owned, max: 1 });
      try {
        await storage.client`create table notes (x int)`;
        const tables = await admin`select tableowner from pg_tables where schemaname = ${owned}`;
        expect(tables.map((t) => t.tableowner)).toEqual([role]);
      } finally {
        await storage.close();
      }
    });

    it('says it may not create a missing schema, not that Postgres is unreachable', async () => {
      const missing = unique('missing');
      const { error } = await failedStart(urlAs(role), { schema: missing });
      expect(error).toBeInstanceOf(StorageError);
      expect(error.message).toContain(`schema "${missing}" does not exist and the role of`);
      expect(error.message).toContain('may not create it');
      expect(error.message).toContain('permission denied for database');
      expect(error.message).not.toContain('cannot reach');
      const left = await admin`select 1 from pg_namespace where nspname = ${missing}`;
      expect(left.length).toBe(0);
    });
  });
});
