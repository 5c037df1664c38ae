import { sql } from 'drizzle-orm';
import type { Logger } from '../../../core/log.ts';
import type { Worker } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';

const DAY = 86_400_000;
const CHUNK = 5000;

/** The smallest UUID v7 of a millisecond: ids below it were made before that time. */
function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`;
}

/**
 * Forgets deliveries, their attempts and the stored events once they are older than the retention,
 * in chunks so no statement runs long. Deliveries are found by their time-ordered id (the primary key);
 * the retry window is 30 minutes, so anything that old has long been settled.
 */
export async function sweepDeliveries(
  storage: Storage,
  cutoff: number,
): Promise<{ deliveries: number; events: number }> {
  let deliveries = 0;
  for (;;) {
    const [row] = await storage.query<{ n: number }>(sql`
      with old as (select id from webhook_deliveries where id < ${uuidv7Floor(cutoff)}::uuid limit ${CHUNK}),
      attempts as (delete from webhook_attempts where delivery_id in (select id from old)),
      gone as (delete from webhook_deliveries where id in (select id from old) returning 1)
      select count(*)::int as n from gone`);
    deliveries += row?.n ?? 0;
    if ((row?.n ?? 0) < CHUNK) break;
  }
  const [events] = await storage.query<{ n: number }>(sql`
    with gone as (delete from webhook_events where created_at < ${cutoff} returning 1)
    select count(*)::int as n from gone`);
  return { deliveries, events: events?.n ?? 0 };
}

const realSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Runs the sweep every hour (of the service's clock), keeping `days` of deliveries. */
export function retentionWorker(o: { storage: Storage; clock: Clock; log: Logger; days: number }): Worker {
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;
  return {
    name: 'webhooks-retention',
    start() {
      loop = (async () => {
        while (!stopping.signal.aborted) {
          try {
            const began = Date.now();
            await o.clock.sleep(3600_000, stopping.signal);
            // A clock that does not really sleep (a test's manual clock) must not make this spin.
            if (Date.now() - began < 1000) await realSleep(60_000, stopping.signal);
          } catch {
            return;
          }
          try {
            const swept = await sweepDeliveries(o.storage, o.clock.now() - o.days * DAY);
            if (swept.deliveries || swept.events)
              o.log.info('old deliveries forgotten', { ...swept, days: o.days });
          } catch (err) {
            o.log.error('forgetting old deliveries failed; trying again in an hour', { err });
          }
        }
      })();
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
