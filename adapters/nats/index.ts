// Placeholder replaced by the JetStream adapter work.
import type { Logger } from '../../core/log.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { EventBus } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';
import { migrations } from './migrations/index.ts';

export { migrations as natsOutboxMigrations };

export interface JetStreamOptions {
  servers: string[];
  streamPrefix: string;
  storage: Storage;
  clock: Clock;
  log: Logger;
}

export async function createJetStreamBus(_options: JetStreamOptions): Promise<EventBus> {
  throw new Error('not implemented');
}
