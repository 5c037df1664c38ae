import type { Clock } from '../../core/ports/clock.ts';

/** A clock that moves only when told to: for tests of time windows (key grace periods, expiries). */
export function manualClock(
  start = Date.parse('2026-01-01T00:00:00Z'),
): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, 0 * ms)),
    rate: 1,
    advance(ms) {
      now += ms;
    },
  };
}
