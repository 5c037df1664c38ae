import { join } from 'node:path';
import { systemClock } from '../../adapters/clock/system.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../../adapters/nats/index.ts';
import { createPgQueueBus, pgQueueMigrations } from '../../adapters/pg-queue/index.ts';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { createPostgresStorage } from '../../adapters/postgres/index.ts';
import { migrate } from '../../core/db/migrate.ts';
import { createLogger } from '../../core/log.ts';
import type { EventBus } from '../../core/ports/event-bus.ts';
import type { Storage } from '../../core/ports/storage.ts';

/**
 * Storage and bus for the crash drill, from DRILL_* variables: DRILL_DATA_DIR (PGlite on disk) or
 * DRILL_DATABASE_URL + DRILL_SCHEMA (Postgres); DRILL_NATS_URL + DRILL_STREAM_PREFIX for JetStream.
 */
export async function busFromEnv(
  env: Record<string, string | undefined>,
): Promise<{ storage: Storage; bus: EventBus }> {
  const log = createLogger('warn', { component: 'drill' }, (line) => console.error(line));
  const storage = env.DRILL_DATABASE_URL
    ? await createPostgresStorage({
        url: env.DRILL_DATABASE_URL,
        ...(env.DRILL_SCHEMA ? { schema: env.DRILL_SCHEMA } : {}),
      })
    : await createPgliteStorage({ dataDir: join(env.DRILL_DATA_DIR!, 'pglite') });
  if (env.DRILL_NATS_URL) {
    await migrate(storage, [natsOutboxMigrations]);
    const bus = await createJetStreamBus({
      servers: [env.DRILL_NATS_URL],
      streamPrefix: env.DRILL_STREAM_PREFIX ?? 'DRILL',
      storage,
      clock: systemClock,
      log,
    });
    return { storage, bus };
  }
  await migrate(storage, [pgQueueMigrations]);
  return { storage, bus: createPgQueueBus({ storage, clock: systemClock, log, pollMs: 100 }) };
}
