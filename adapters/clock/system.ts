import type { Clock } from '../../core/ports/clock.ts';

export const abortable = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** The real clock. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: abortable,
  rate: 1,
};

/**
 * A clock that runs `rate` times faster than real time from the moment it is made: a 30-minute retry
 * window passes in 1.8 s at rate 1000. Tests and drills use it; production never does.
 */
export function scaledClock(rate: number, start: number = Date.now()): Clock {
  const realStart = Date.now();
  return {
    now: () => start + (Date.now() - realStart) * rate,
    sleep: (ms, signal) => abortable(ms / rate, signal),
    rate,
  };
}
