/** Resolves after `ms` real milliseconds, or at once when the signal aborts (never rejects). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(1, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Exponential backoff with jitter: `base`, `2 base`, `4 base`, ... up to `max`, each less up to a quarter. */
export function backoffMs(failures: number, base: number, max: number): number {
  const ms = Math.min(max, base * 2 ** Math.min(failures, 20));
  return Math.round(ms * (0.75 + Math.random() * 0.25));
}

/** A wake-up that is not lost when it comes before the wait: `wait` returns at once if `wake` ran since. */
export class Signal {
  private woken = false;
  private resolve: (() => void) | undefined;

  wake(): void {
    this.woken = true;
    this.resolve?.();
  }

  /** Waits for a wake, `ms`, or the abort of `signal`, whichever is first; then clears the wake. */
  async wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.woken && !signal?.aborted) {
      const woken = new Promise<void>((r) => {
        this.resolve = r;
      });
      const ctl = new AbortController();
      const stop = () => ctl.abort();
      signal?.addEventListener('abort', stop, { once: true });
      await Promise.race([woken, pause(ms, ctl.signal)]);
      ctl.abort();
      signal?.removeEventListener('abort', stop);
      this.resolve = undefined;
    }
    this.woken = false;
  }
}
