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

/**
 * A route's `parse` for a JSON body the request may leave out: no body (or an empty one) reads as
 * null, anything else must be JSON, whatever its content-type says. `parse: 'json'` would refuse a
 * request without a body, and Elysia's own optional-body handling does not see valibot's optional.
 *
 * @example .post('/things/:id/run', handler, { parse: optionalJson, body: v.nullish(RunSchema) })
 */
export async function optionalJson({ request }: { request: Request }): Promise<unknown> {
  const text = await request.text();
  return text === '' ? null : JSON.parse(text);
}
