import { afterEach, beforeEach, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { migrate } from '../../core/db/migrate.ts';
import { arrayLiteral, prepared } from '../../core/db/prepared.ts';
import type { MigrationSet, Storage } from '../../core/ports/storage.ts';

export interface StorageHarness {
  storage: Storage;
  /** A second handle on the same database (another replica). */
  another(): Promise<Storage>;
  cleanup(): Promise<void>;
}

const uniq = () => `c${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;

const setOf = (name: string, table: string): MigrationSet => ({
  name,
  migrations: [
    { id: '0001_init', statements: [`create table ${table} (id int primary key, v text not null)`] },
    {
      id: '0002_more',
      statements: [`alter table ${table} add column w text`, `create index ${table}_v on ${table} (v)`],
    },
  ],
});

/** The Storage contract: every adapter passes it unchanged. */
export function storageContract(name: string, makeHarness: () => Promise<StorageHarness>) {
  describe(`Storage contract: ${name}`, () => {
    let h: StorageHarness;
    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('applies each migration once and nothing on a second run', async () => {
      const table = uniq();
      const set = setOf(table, table);
      expect((await migrate(h.storage, [set])).applied).toEqual([`${table}/0001_init`, `${table}/0002_more`]);
      expect((await migrate(h.storage, [set])).applied).toEqual([]);
      await h.storage.query(sql.raw(`insert into ${table} (id, v, w) values (1, 'a', 'b')`));
    });

    it('lets replicas that start at once take turns: every migration applied exactly once', async () => {
      const table = uniq();
      const set = setOf(table, table);
      const other = await h.another();
      try {
        const results = await Promise.all([
          migrate(h.storage, [set]),
          migrate(other, [set]),
          migrate(h.storage, [set]),
        ]);
        expect(results.flatMap((r) => r.applied).sort()).toEqual([
          `${table}/0001_init`,
          `${table}/0002_more`,
        ]);
      } finally {
        if (other !== h.storage) await other.close();
      }
    });

    it('rolls back every statement of a failing run and names the migration', async () => {
      const table = uniq();
      const bad: MigrationSet = {
        name: table,
        migrations: [
          { id: '0001_ok', statements: [`create table ${table} (id int primary key)`] },
          { id: '0002_bad', statements: ['create tabel nonsense'] },
        ],
      };
      await expect(migrate(h.storage, [bad])).rejects.toThrow(`migration ${table}/0002_bad failed`);
      const rows = await h.storage.query<{ n: string | number }>(
        sql`select count(*) as n from information_schema.tables where table_name = ${table}`,
      );
      expect(Number(rows[0]!.n)).toBe(0);
    });

    it('commits a transaction, or rolls it back whole; afterCommit runs only after a commit', async () => {
      const table = uniq();
      await migrate(h.storage, [setOf(table, table)]);
      const calls: string[] = [];
      await h.storage.transaction(async (tx) => {
        await tx.query(sql.raw(`insert into ${table} (id, v) values (1, 'kept')`));
        tx.afterCommit(() => calls.push('committed'));
        expect(calls).toEqual([]);
      });
      await expect(
        h.storage.transaction(async (tx) => {
          await tx.query(sql.raw(`insert into ${table} (id, v) values (2, 'lost')`));
          tx.afterCommit(() => calls.push('never'));
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      const rows = await h.storage.query<{ v: string }>(sql.raw(`select v from ${table} order by id`));
      expect(rows.map((r) => r.v)).toEqual(['kept']);
      expect(calls).toEqual(['committed']);
    });

    it('delivers a NOTIFY to a listener, and only after the transaction commits', async () => {
      const channel = uniq();
      const got: string[] = [];
      const stop = await h.storage.listen(channel, (p) => got.push(p));
      await h.storage.transaction(async (tx) => {
        await tx.query(sql`select pg_notify(${channel}, 'hello')`);
        await new Promise((r) => setTimeout(r, 100));
        expect(got).toEqual([]);
      });
      const until = Date.now() + 5000;
      while (got.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      await stop();
      expect(got).toEqual(['hello']);
    });

    it('says how many statements it runs at once: a positive integer, 1 on a single connection', () => {
      const n = h.storage.writeConcurrency;
      expect(Number.isInteger(n) && n >= 1).toBe(true);
      if (h.storage.kind === 'pglite') expect(n).toBe(1);
    });

    it('runs unnamed statements on text, numbers and null, arrays sent as literals, and JS arrays', async () => {
      interface Row {
        a: string;
        n: string | number;
        z: string | null;
        j: string;
        arr: string[];
      }
      const run = prepared<Row>(
        null,
        `select $1::text as a, $2::bigint as n, $3::text as z, ($4::jsonb)->>'k' as j, $5::text[] as arr`,
      );
      const tricky = ['plain', 'with "quotes"', 'back\\slash', 'comma, {braces}', 'NULL', ''];
      const [row] = await run(h.storage.db, 'x', 42, null, JSON.stringify({ k: 'v' }), arrayLiteral(tricky));
      expect(row).toEqual({ a: 'x', n: expect.anything(), z: null, j: 'v', arr: tricky });
      expect(Number(row!.n)).toBe(42);
      expect(arrayLiteral([])).toBe('{}');
      // Any other value still works: postgres.js learns the types first.
      const count = prepared<{ n: string | number }>(null, 'select cardinality($1::text[]) as n');
      expect(Number((await count(h.storage.db, ['a', 'b', 'c']))[0]!.n)).toBe(3);
      // A value the statement refuses fails that statement alone, and the next one runs.
      await expect(run(h.storage.db, 'x', 'not a number', null, '{}', '{}')).rejects.toThrow();
      expect((await run(h.storage.db, 'y', 1, null, '{}', '{}'))[0]!.a).toBe('y');
    });

    it('answers ping', async () => {
      await h.storage.ping();
    });
  });
}
