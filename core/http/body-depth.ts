import { Elysia } from 'elysia';
import { CoreErrors } from '../errors.ts';

/** How deeply request bodies may nest arrays and objects, unless a route declares its own bound. */
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
 * Refuses a parsed body nesting deeper than `max` (MAX_BODY_DEPTH by default), before validation: deep
 * documents cost the validators and every later serialisation far more than their size suggests.
 */
export function checkBodyDepth(body: unknown, max = MAX_BODY_DEPTH): void {
  if (nestsDeeperThan(body, max))
    throw CoreErrors.BODY_TOO_DEEP(`request body nests arrays and objects deeper than ${max} levels`);
}

/**
 * The route option `bodyDepth`: the bound of a route whose body wraps values that may themselves nest
 * MAX_BODY_DEPTH levels (attribute values inside their bucket objects), so the wrapper levels do not
 * count against the values. The route still has a bound; the option only moves it.
 *
 * @example new Elysia().use(bodyDepthOption).put('/things', handler, { bodyDepth: MAX_BODY_DEPTH + 1 })
 */
export const bodyDepthOption = new Elysia({ name: 'body-depth' }).macro({
  // Read by the app's transform (bodyDepthIndex), which runs before a route's own hooks.
  bodyDepth: (_max: number) => ({}),
});

/** A route as the router lists it, with the options it was declared with. */
interface DeclaredRoute {
  method: string;
  path: string;
  hooks?: unknown;
}

const declaredDepth = (hooks: unknown): number | undefined =>
  typeof hooks === 'object' && hooks !== null && 'bodyDepth' in hooks && typeof hooks.bodyDepth === 'number'
    ? hooks.bodyDepth
    : undefined;

/**
 * The body depth bound of each route (method and pattern): its `bodyDepth`, or MAX_BODY_DEPTH. The
 * table is built from the app's routes when first asked, and again only if routes were added since.
 */
export function bodyDepthIndex(routes: () => readonly DeclaredRoute[]) {
  let seen = -1;
  let table = new Map<string, number>();
  return (method: string, route: string): number => {
    const all = routes();
    if (all.length !== seen) {
      seen = all.length;
      table = new Map();
      for (const r of all) {
        const depth = declaredDepth(r.hooks);
        if (depth !== undefined) table.set(`${r.method} ${r.path}`, depth);
      }
    }
    return table.get(`${method} ${route}`) ?? MAX_BODY_DEPTH;
  };
}
