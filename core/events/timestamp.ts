import type { Clock } from '../ports/clock.ts';

/** The last stamp given out per clock, as whole milliseconds and nanoseconds within that millisecond. */
interface Last {
  ms: number;
  ns: number;
}
const lastStamp = new WeakMap<Clock, Last>();

// Nanoseconds within the millisecond from the monotonic high-resolution timer. It has its own origin,
// so these digits are not the wall clock's own fraction; they make stamps within one millisecond distinct
// and, with the clamp below, ordered.
const subMillisecondNs = (): number => Math.floor((performance.now() % 1) * 1_000_000);

/**
 * An RFC 3339 UTC timestamp with exactly nine fractional digits: milliseconds from the clock (so a test's
 * fast or manual clock rules event times too), the sub-millisecond digits from `performance.now()`.
 *
 * Consecutive stamps from one clock strictly increase within a process: when the clock stands still or
 * steps back (an NTP correction), the stamp is the previous one plus a nanosecond, until the clock
 * catches up. Consumers may order a process's events by timestamp.
 *
 * @example nanoTimestamp(systemClock) // '2026-01-02T03:04:05.123456789Z'
 */
export function nanoTimestamp(clock: Clock): string {
  let ms = Math.floor(clock.now());
  let ns = subMillisecondNs();
  const last = lastStamp.get(clock);
  if (last && (ms < last.ms || (ms === last.ms && ns <= last.ns))) {
    ms = last.ms;
    ns = last.ns + 1;
    if (ns === 1_000_000) {
      ms += 1;
      ns = 0;
    }
  }
  if (last) {
    last.ms = ms;
    last.ns = ns;
  } else lastStamp.set(clock, { ms, ns });
  // toISOString gives `...SS.mmmZ`; the nanoseconds within the millisecond supply the other six digits.
  return `${new Date(ms).toISOString().slice(0, -1)}${String(ns).padStart(6, '0')}Z`;
}
