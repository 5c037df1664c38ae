/** The Clock port: lets tests run a 30-minute retry window in seconds. */
export interface Clock {
  /** Milliseconds since the Unix epoch, on this clock. */
  now(): number;
  /** Resolves after `ms` of this clock's time, or early (rejecting) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Clock milliseconds per real millisecond: 1 for the system clock. */
  readonly rate: number;
}

export const realMs = (clock: Clock, ms: number): number => Math.max(0, Math.ceil(ms / clock.rate));
