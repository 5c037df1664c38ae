import { afterEach, describe, expect, it } from 'bun:test';
import postgres from 'postgres';
import { postgresProxy } from './postgres-proxy.ts';

/**
 * The vendored postgres.js's pipelined BEGIN (vendor/postgres/PATCHED.md): a transaction's first query
 * goes out behind BEGIN without waiting for its answer, and the transaction still commits whole or not
 * at all.
 */

/**
 * A loopback proxy to the real Postgres. Once the client sends a plain BEGIN, Postgres's answers are
 * held back until the client sends a query naming `first-query` (or `holdMs` passes): `pipelined` says
 * whether the query came while BEGIN's answer was held. With `resetOnBegin`, the connection is reset as
 * BEGIN passes instead.
 */
async function holdingProxy(o: { holdMs?: number; resetOnBegin?: boolean } = {}) {
  let pipelined = 0;
  let heldFor = 0;
  const proxy = await postgresProxy((client, upstream) => {
    let held: Buffer[] | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const release = () => {
      if (timer) clearTimeout(timer);
      const chunks = held ?? [];
      held = undefined;
      for (const c of chunks) if (client.writable) client.write(c);
    };
    client.on('data', (chunk: Buffer) => {
      const begins = chunk.includes('begin \0');
      if (begins && o.resetOnBegin) {
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      if (held && chunk.includes('first-query')) {
        pipelined++;
        upstream.write(chunk);
        return release();
      }
      if (begins && chunk.includes('first-query')) pipelined++;
      else if (begins) {
        held = [];
        const since = Date.now();
        timer = setTimeout(() => {
          heldFor = Date.now() - since;
          release();
        }, o.holdMs ?? 1000);
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (held) held.push(chunk);
      else if (client.writable) client.write(chunk);
    });
  });
  return { ...proxy, pipelined: () => pipelined, heldFor: () => heldFor };
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

async function connect(o: Parameters<typeof holdingProxy>[0] = {}) {
  const proxy = await holdingProxy(o);
  const sql = postgres(proxy.url, { max: 2, onnotice: () => {}, connect_timeout: 5 });
  const table = `begin_${process.pid}_${Date.now().toString(36)}`;
  cleanup = async () => {
    await sql.unsafe(`drop table if exists ${table}`).catch(() => {});
    await sql.end({ timeout: 1 });
    proxy.close();
  };
  await sql.unsafe(`create table ${table} (n int primary key)`);
  const count = async () => (await sql.unsafe(`select count(*)::int as n from ${table}`))[0]!.n as number;
  return { proxy, sql, table, count };
}

describe('postgres.js transactions with a pipelined BEGIN', () => {
  it("sends the transaction's first query before BEGIN's answer comes back", async () => {
    const { proxy, sql } = await connect();
    const [row] = await sql.begin(async (tx) => tx`select 'first-query' as q, txid_current() as id`);
    expect(row?.q).toBe('first-query');
    expect(proxy.pipelined()).toBe(1);
    expect(proxy.heldFor()).toBe(0);
  });

  it('runs the first query inside the transaction: one transaction id, and a later failure undoes it', async () => {
    const { sql, table, count } = await connect({ holdMs: 50 });
    const ids = await sql.begin(async (tx) => {
      const [a] = await tx.unsafe(`insert into ${table} values (1) returning txid_current()::text as id`);
      const [b] = await tx`select txid_current()::text as id`;
      return [a?.id, b?.id];
    });
    expect(ids[0]).toBeDefined();
    expect(ids[0]).toBe(ids[1]);
    expect(await count()).toBe(1);
    const failed = await sql
      .begin(async (tx) => {
        await tx.unsafe(`insert into ${table} values (2)`);
        await tx.unsafe(`insert into ${table} values (1)`);
      })
      .then(
        () => 'committed',
        (e: Error) => e.message,
      );
    expect(failed).toContain('duplicate key');
    expect(await count()).toBe(1);
    const firstFails = await sql
      .begin(async (tx) => {
        await tx.unsafe(`insert into ${table} values (1)`);
      })
      .then(
        () => 'committed',
        (e: Error) => e.message,
      );
    expect(firstFails).toContain('duplicate key');
    // The connection is usable again, in no transaction.
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
  });

  it('keeps concurrent transactions apart on a small pool', async () => {
    const { sql, table, count } = await connect({ holdMs: 50 });
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        sql.begin(async (tx) => {
          const [a] = await tx.unsafe(
            `insert into ${table} values (${i}) returning txid_current()::text as id`,
          );
          const [b] = await tx`select txid_current()::text as id`;
          return a?.id === b?.id;
        }),
      ),
    );
    expect(results.every(Boolean)).toBe(true);
    expect(await count()).toBe(100);
  });

  it('waits for a BEGIN with options, as upstream does', async () => {
    const { proxy, sql } = await connect({ holdMs: 50 });
    const [row] = await sql.begin(
      'isolation level serializable',
      async (tx) => tx`show transaction_isolation`,
    );
    expect(row?.transaction_isolation).toBe('serializable');
    expect(proxy.pipelined()).toBe(0);
  });

  it('fails the transaction, and nothing else, when the connection resets as BEGIN passes', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const proxy = await holdingProxy({ resetOnBegin: true });
      const sql = postgres(proxy.url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
      cleanup = async () => {
        await sql.end({ timeout: 1 });
        proxy.close();
      };
      expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
      const outcome = await sql
        .begin(async (tx) => tx`select 'first-query' as q`)
        .then(
          () => 'committed',
          (e: Error & { code?: string }) => e.code ?? e.message,
        );
      expect(['ECONNRESET', 'CONNECTION_CLOSED']).toContain(outcome);
      await Bun.sleep(50);
      expect(unhandled.map(String)).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
