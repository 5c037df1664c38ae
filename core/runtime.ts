/** Runtime differences, in one place. */

type Immediate = (fn: () => void) => unknown;
const immediate: Immediate | undefined = (globalThis as { setImmediate?: Immediate }).setImmediate;

/**
 * Resolves after the event loop has had a turn (timers, network, crypto callbacks). A loop whose every
 * await is a microtask (PGlite answers that way) would otherwise keep everything else waiting.
 */
export const yieldToEventLoop = (): Promise<void> =>
  new Promise((resolve) => {
    if (immediate) immediate(resolve);
    else setTimeout(resolve, 0);
  });
