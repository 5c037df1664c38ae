import { systemClock } from '../../adapters/clock/system.ts';
import { createPgQueueBus } from '../../adapters/pg-queue/index.ts';
import { createLogger } from '../../core/log.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { eventBusContract } from './event-bus.contract.ts';

const log = createLogger('silent');
let n = 0;

eventBusContract('pg-queue on PGlite', async () => {
  const storage = await freshPglite();
  const buses = [createPgQueueBus({ storage, clock: systemClock, log, pollMs: 100 })];
  return {
    bus: buses[0]!,
    storage,
    clock: systemClock,
    another: async () => {
      const b = createPgQueueBus({ storage, clock: systemClock, log, pollMs: 100 });
      buses.push(b);
      return b;
    },
    topic: () => `t${++n}`,
    cleanup: async () => {
      for (const b of buses) await b.close();
      await storage.close();
    },
  };
});
