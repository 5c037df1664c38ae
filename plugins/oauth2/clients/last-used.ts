import type { Logger } from '../../../core/log.ts';
import type { Worker } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { ClientStore } from '../store/clients.ts';

/** How coarse last_used is: a client is written at most this often, in one statement for all of them. */
const INTERVAL_MS = 60_000;

/**
 * A client's last use, kept off the token endpoint's path: a use is noted in memory and written by a
 * worker every minute, so a grant costs no write.
 */
export function createLastUsed(deps: { store: Pick<ClientStore, 'touch'>; clock: Clock; log: Logger }) {
  const { store, clock, log } = deps;
  const written = new Map<string, number>();
  const pending = new Set<string>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const ids = [...pending];
    pending.clear();
    try {
      await store.touch(ids, clock.now());
    } catch (err) {
      log.warn('recording last_used of OAuth 2.0 clients failed', { err, clients: ids.length });
    }
  }

  const worker: Worker = {
    name: 'oauth2-last-used',
    start() {
      timer = setInterval(() => {
        flushing = flush();
      }, INTERVAL_MS);
      timer.unref?.();
    },
    async stop() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };

  return {
    worker,
    /** Notes a use; cheap enough for every grant. */
    seen(clientId: string): void {
      const now = clock.now();
      const last = written.get(clientId);
      if (last !== undefined && now - last < INTERVAL_MS) return;
      if (written.size >= 10_000) written.clear();
      written.set(clientId, now);
      pending.add(clientId);
    },
  };
}

export type LastUsed = ReturnType<typeof createLastUsed>;
