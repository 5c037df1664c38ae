import { afterEach, describe, expect, it } from 'bun:test';
import postgres from 'postgres';
import { postgresProxy } from './postgres-proxy.ts';

/**
 * The vendored postgres.js when Postgres ends a connection while it is still starting up: each new connection
 * first asks for the array types, and a restart, a failover or `pg_terminate_backend` can land right then.
 * Upstream (porsager/postgres#1192, #1205, #1223) drops that query's promise, so its failure is an unhandled
 * rejection that ends the process (a replica died this way in the Postgres-restart drill), and a reconnect
 * replays the dead connection's error onto the first query of the new one.
 */

type Sabotage = 'reset' | 'terminate' | 'reset-marked';

/** The ErrorResponse Postgres sends a backend it terminates (`pg_terminate_backend`, a fast shutdown). */
function adminShutdown(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'];
  const body = Buffer.concat([...fields.map((f) => Buffer.from(`${f}\0`)), Buffer.from([0])]);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * A loopback proxy to the real Postgres that ends the first connection as the driver's array-types query
 * passes (by a reset, or by Postgres's own termination message and a close), or with `reset-marked` as a
 * query naming `reset-me` passes; later connections pass through.
 */
async function saboteur(how: Sabotage): Promise<{ url: string; sabotaged: () => number; close(): void }> {
  let sabotaged = 0;
  const proxy = await postgresProxy((client, upstream) => {
    const armed = sabotaged === 0;
    client.on('data', (chunk: Buffer) => {
      const trigger = how === 'reset-marked' ? 'reset-me' : 'pg_catalog.pg_type';
      if (armed && sabotaged === 0 && chunk.includes(trigger)) {
        sabotaged++;
        upstream.destroy();
        if (how !== 'terminate') client.resetAndDestroy();
        else client.end(adminShutdown());
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.writable && client.write(chunk));
  });
  return { ...proxy, sabotaged: () => sabotaged };
}

const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
let cleanup: (() => Promise<void>) | undefined;

afterEach(async () => {
  process.off('unhandledRejection', record);
  await cleanup?.();
  cleanup = undefined;
});

describe('postgres.js when a connection dies while it starts', () => {
  for (const how of ['reset', 'terminate'] as const) {
    it(`by a ${how === 'reset' ? 'connection reset' : 'terminating backend (57P01)'}: nothing unhandled, the next query answers`, async () => {
      unhandled.length = 0;
      process.on('unhandledRejection', record);
      const proxy = await saboteur(how);
      const sql = postgres(proxy.url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
      cleanup = async () => {
        await sql.end({ timeout: 1 });
        proxy.close();
      };
      // The first query waits for the sabotaged connection: it may fail with the connection's own error, or
      // answer on the reconnected one, but never with a stale error once a new connection is up.
      const first = await sql`select 1 as one`.then(
        (rows) => ({ ok: true as const, rows }),
        (err: Error & { code?: string }) => ({ ok: false as const, code: err.code, message: err.message }),
      );
      expect(proxy.sabotaged()).toBe(1);
      if (how === 'terminate') expect(first).toMatchObject({ ok: true, rows: [{ one: 1 }] });
      else if (!first.ok) expect(['ECONNRESET', 'CONNECTION_CLOSED']).toContain(first.code ?? '');
      // The pool goes on: the next query answers on a fresh connection.
      expect([...(await sql`select 2 as two`)]).toEqual([{ two: 2 }]);
      // A dropped rejection surfaces a tick or two later.
      await Bun.sleep(50);
      expect(unhandled.map((e) => String(e))).toEqual([]);
    });
  }

  it('settles every query handed to a connection between its reset and its close', async () => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
    const proxy = await saboteur('reset-marked');
    const sql = postgres(proxy.url, { max: 1, onnotice: () => {}, connect_timeout: 5 });
    cleanup = async () => {
      await sql.end({ timeout: 1 });
      proxy.close();
    };
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);
    // The reset fails the marked query at once; its handler runs before the socket's close, and hands
    // the same connection two more queries: they must fail (or answer), never wait for ever.
    const more = sql`select 'reset-me' as marked`.then(
      () => 'answered',
      () => Promise.allSettled([sql`select 4 as four`, sql`select 5 as five`]),
    );
    const outcome = await Promise.race([
      more.then(() => 'settled'),
      Bun.sleep(5000).then(() => 'still waiting after 5 s'),
    ]);
    expect(proxy.sabotaged()).toBe(1);
    expect(outcome).toBe('settled');
    expect([...(await sql`select 6 as six`)]).toEqual([{ six: 6 }]);
    await Bun.sleep(50);
    expect(unhandled.map((e) => String(e))).toEqual([]);
  }, 20_000);
});
