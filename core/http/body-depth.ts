import { CoreErrors } from '../errors.ts';

/** How deeply request bodies may nest arrays and objects. */
export const MAX_BODY_DEPTH = 64;

/** True when `value` nests arrays and objects more than `max` levels deep; looks no deeper than that. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, max - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], max - 1)) return true;
  return false;
}

/**
 * Refuses a parsed body nesting deeper than MAX_BODY_DEPTH, before validation: deep documents cost the
 * validators and every later serialisation far more than their size suggests.
 */
export function checkBodyDepth(body: unknown): void {
  if (nestsDeeperThan(body, MAX_BODY_DEPTH))
    throw CoreErrors.BODY_TOO_DEEP(
      `request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    );
}
