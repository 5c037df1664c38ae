import type { Logger } from '../../../core/log.ts';
import type { Worker } from '../../../core/plugin.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import type { SessionEnding } from './end.ts';
import type { SessionStore } from './store.ts';

export interface SessionSweepDeps {
  storage: Storage;
  sessions: SessionStore;
  finish: SessionEnding;
}

/**
 * Ends the sessions whose idle or absolute lifetime ran out, with their events and back-channel
 * notices, in one transaction: what the delete took is reported once, by the replica that took it.
 * Answers how many ended. A session past its lifetime is no session to any reader before this runs.
 */
export function endExpiredSessions(deps: SessionSweepDeps): Promise<number> {
  return deps.storage.transaction(async (tx) => {
    const ended = await deps.sessions.endExpired(tx);
    await deps.finish(ended, { tx });
    return ended.length;
  });
}

/** Ends expired sessions every `intervalMs` (on each replica: a session is ended by one of them). */
export function sessionSweeper(deps: SessionSweepDeps & { log: Logger; intervalMs: number }): Worker {
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    name: 'oauth2-authorize-session-sweeper',
    start() {
      timer = setInterval(() => {
        running = endExpiredSessions(deps).catch((error) =>
          deps.log.warn('ending expired sign-in sessions failed', { error: String(error) }),
        );
      }, deps.intervalMs);
      timer.unref?.();
    },
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
