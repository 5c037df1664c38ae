import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createLogger } from '../../core/log.ts';
import type { EventBus } from '../../core/ports/event-bus.ts';
import { eventBusContract } from '../contract/event-bus.contract.ts';
import { deleteStreams, freshPostgres, NATS_URL, uniquePrefix } from './support.ts';

const log = createLogger('silent');
let topics = 0;

eventBusContract('JetStream on NATS, outbox on Postgres', async () => {
  const db = await freshPostgres([natsOutboxMigrations]);
  const streamPrefix = uniquePrefix();
  const make = () =>
    createJetStreamBus({
      servers: [NATS_URL],
      streamPrefix,
      storage: db.storage,
      clock: systemClock,
      log,
      relayPollMs: 100,
    });
  const buses: EventBus[] = [await make()];
  return {
    bus: buses[0]!,
    storage: db.storage,
    clock: systemClock,
    another: async () => {
      const b = await make();
      buses.push(b);
      return b;
    },
    topic: () => `t${++topics}`,
    cleanup: async () => {
      for (const b of buses) await b.close();
      await deleteStreams(streamPrefix);
      await db.drop();
    },
  };
});
