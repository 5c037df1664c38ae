import { CoreErrors } from '../errors.ts';

/**
 * A route's `transform` for bodies that must be JSON objects: valibot's `object` takes an array for
 * an object with no members, so `[]` would pass as an empty update. Runs before validation.
 *
 * @example .patch('/things/:id', handler, { parse: 'json', transform: refuseArrayBody, body: PatchSchema })
 */
export function refuseArrayBody({ body }: { body: unknown }): void {
  if (Array.isArray(body)) throw CoreErrors.VALIDATION('body: must be a JSON object, not an array');
}
