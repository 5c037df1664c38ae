/**
 * The retry schedule of deliveries to customers' URLs: webhook events (docs/spec/identity-service-interface.md,
 * Events > Event triggers; docs/guides/webhooks.md, Delivery) and back-channel logout tokens
 * (docs/guides/hosted-login.md). Pure arithmetic on clock milliseconds: the caller keeps the attempts.
 */

const MINUTE = 60_000;

/** The retry window: no attempt is scheduled later than this after the first one. */
export const RETRY_WINDOW_MS = 30 * MINUTE;

/**
 * The delay before the retry that follows the `failedAttempts`-th failed attempt: 1, 2, 4, 8, then 10
 * minutes for every later one (exponential from 1 minute, capped at 10).
 */
export function backoffMs(failedAttempts: number): number {
  const n = Math.max(1, Math.floor(failedAttempts));
  return Math.min(10 * MINUTE, MINUTE * 2 ** Math.min(n - 1, 10));
}

/** When the retry after the `n`-th failed attempt is due, counted from the first attempt: 1, 3, 7, 15, 25 min. */
export function scheduledRetryMs(failedAttempts: number): number {
  let at = 0;
  for (let i = 1; i <= failedAttempts; i++) at += backoffMs(i);
  return at;
}

/**
 * What to do after the `failedAttempts`-th failed attempt, which started at `attemptAt`, the first having
 * started at `firstAttemptAt`. Retries are due on a schedule anchored to the first attempt (1, 3, 7, 15
 * and 25 minutes after it), so an attempt that ran late (a busy queue, a restart) does not push the
 * others back and out of the window; a retry is never due sooner than a minute after the attempt
 * before it. The next retry would fall 35 minutes after the first attempt, past the 30-minute window:
 * the delivery is dropped instead.
 */
export function nextAfterFailure(
  failedAttempts: number,
  attemptAt: number,
  firstAttemptAt: number,
): { retryAt: number } | { drop: true } {
  const scheduled = firstAttemptAt + scheduledRetryMs(failedAttempts);
  const retryAt = Math.max(scheduled, attemptAt + MINUTE);
  return retryAt - firstAttemptAt <= RETRY_WINDOW_MS ? { retryAt } : { drop: true };
}
