import { CoreErrors } from '../errors.ts';
import type { HeaderNames } from './headers.ts';

/** The methods that change state: they carry the consistency headers. */
export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type ConsistencyLevel = 'local_region' | 'all_regions';

export interface Consistency {
  level: ConsistencyLevel;
  timeoutMs: number;
}

export const DEFAULT_CONSISTENCY: Consistency = { level: 'local_region', timeoutMs: 30_000 };

/**
 * Reads the consistency headers; 400 for a value outside the rules. With one region, `all_regions`
 * waits for exactly what `local_region` does: the commit on the shared primary.
 */
export function parseConsistency(headers: Headers, names: HeaderNames): Consistency {
  const level = headers.get(names.consistency);
  const timeout = headers.get(names.consistencyTimeout);
  if (level !== null && level !== 'local_region' && level !== 'all_regions') {
    throw CoreErrors.INVALID_CONSISTENCY(
      `header ${names.consistency} must be local_region or all_regions (got ${JSON.stringify(level)})`,
    );
  }
  let timeoutMs = DEFAULT_CONSISTENCY.timeoutMs;
  if (timeout !== null) {
    const t = timeout.trim();
    if (!/^\d{1,3}$/.test(t) || Number(t) < 1 || Number(t) > 120) {
      throw CoreErrors.INVALID_CONSISTENCY(
        `header ${names.consistencyTimeout} must be an integer number of seconds from 1 to 120 (got ${JSON.stringify(timeout)})`,
      );
    }
    timeoutMs = Number(t) * 1000;
  }
  return { level: (level as ConsistencyLevel | null) ?? DEFAULT_CONSISTENCY.level, timeoutMs };
}

const arrivals = new WeakMap<Request, number>();

/** Notes when a request arrived: its consistency timeout counts from then (the HTTP app calls this). */
export const markArrival = (request: Request): void => void arrivals.set(request, performance.now());

/**
 * Runs a write that must be durable and visible to every replica before the response. Past the
 * timeout (counted from `startedAt`) the caller gets 408 while the write goes on and may still land.
 */
export async function withConsistency<T>(
  consistency: Consistency,
  write: () => Promise<T>,
  startedAt: number = performance.now(),
): Promise<T> {
  const remaining = consistency.timeoutMs - (performance.now() - startedAt);
  // The whole timeout went before the write could start (authentication waited on a busy database, say):
  // answer 408 at once and write nothing, rather than let a write that then runs quickly answer late.
  if (remaining <= 0)
    throw CoreErrors.CONSISTENCY_TIMEOUT(
      `the timeout of ${consistency.timeoutMs / 1000} s passed before the write could start; nothing was written`,
    );
  let timer: ReturnType<typeof setTimeout> | undefined;
  const work = write();
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          CoreErrors.CONSISTENCY_TIMEOUT(
            `the write did not reach ${consistency.level} consistency within ${consistency.timeoutMs / 1000} s; it may still be applied`,
          ),
        ),
      remaining,
    );
  });
  // The write continues after a timeout; its eventual failure must not become an unhandled rejection.
  work.catch(() => {});
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The state-changing request's write under its consistency headers, the timeout counted from the
 * request's arrival (time spent on authentication or waiting for the database counts too).
 *
 * @example await consistentWrite(request, ctx.headers, () => store.save(orgId, value));
 */
export function consistentWrite<T>(
  request: Request,
  names: HeaderNames,
  write: () => Promise<T>,
): Promise<T> {
  return withConsistency(parseConsistency(request.headers, names), write, arrivals.get(request));
}
