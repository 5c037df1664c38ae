import { systemClock } from '../../adapters/clock/system.ts';
import { createPgQueueBus, pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { createLogger } from '../../core/log.ts';
import type { EventBus } from '../../core/ports/event-bus.ts';
import { eventBusContract } from '../contract/event-bus.contract.ts';
import { freshPostgres } from './support.ts';

const log = createLogger('silent');
let topics = 0;

eventBusContract('pg-queue on Postgres', async () => {
  const db = await freshPostgres([pgQueueMigrations]);
  const make = () => createPgQueueBus({ storage: db.storage, clock: systemClock, log, pollMs: 100 });
  const buses: EventBus[] = [make()];
  return {
    bus: buses[0]!,
    storage: db.storage,
    clock: systemClock,
    another: async () => {
      const b = make();
      buses.push(b);
      return b;
    },
    // LISTEN channels are database-wide: topics unique to this run keep other schemas' wake-ups apart.
    topic: () => `pg${process.pid}-${++topics}`,
    cleanup: async () => {
      for (const b of buses) await b.close();
      await db.drop();
    },
  };
});
