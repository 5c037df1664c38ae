import { describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { systemClock } from '../../adapters/clock/system.ts';
import { createPgQueueBus } from '../../adapters/pg-queue/index.ts';
import { createLogger } from '../../core/log.ts';
import { freshPglite } from '../helpers/pglite.ts';

describe('pg-queue on PGlite: group commit of publishes', () => {
  it('writes the publishes of requests arriving one event-loop turn apart in one statement', async () => {
    const storage = await freshPglite();
    const bus = createPgQueueBus({ storage, clock: systemClock, log: createLogger('silent') });
    // PGlite answers in microtasks: count the inserts it is asked to run.
    const client = storage.client;
    const query = client.query.bind(client);
    let inserts = 0;
    client.query = (text, params, options) => {
      if (text.includes('insert into bus_messages')) inserts++;
      return query(text, params, options);
    };
    try {
      // As requests from the network do: each in its own macrotask, publishing after a query of its own.
      const requests = Array.from(
        { length: 32 },
        (_, i) =>
          new Promise<void>((resolve, reject) =>
            setImmediate(() =>
              storage
                .query(sql`select 1`)
                .then(() => bus.publish('batching', [{ payload: { i } }]))
                .then(resolve, reject),
            ),
          ),
      );
      await Promise.all(requests);
      expect(inserts).toBeLessThanOrEqual(2);
      const [row] = await storage.query<{ n: number }>(
        sql`select count(*)::int as n from bus_messages where topic = 'batching'`,
      );
      expect(row?.n).toBe(32);
    } finally {
      await bus.close();
      await storage.close();
    }
  });
});
