import type { Storage } from '../ports/storage.ts';
import { yieldToEventLoop } from '../runtime.ts';

/**
 * One turn of the event loop that concurrent callers wait out together, before a batched lookup or
 * write. On a single connection (PGlite) a statement answers in microtasks, so a request runs from
 * arrival to its statement without letting another in, and every request would be a batch of one: they
 * wait one turn together, then all start at once. On a pool (`writeConcurrency` above 1), no wait.
 *
 * @example
 * const gate = batchGate(storage);
 * async function find(id: string) { await gate(); return loader.load(id); }
 */
export function batchGate(storage: Storage): () => Promise<void> {
  if (storage.writeConcurrency > 1) return () => Promise.resolve();
  let turn: Promise<void> | null = null;
  return () => {
    turn ??= yieldToEventLoop().then(() => {
      turn = null;
    });
    return turn;
  };
}
