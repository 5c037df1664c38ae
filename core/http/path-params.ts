import { CoreErrors } from '../errors.ts';
import { quoted as shown } from '../text.ts';
import { urlPathOf } from './request-target.ts';

/** A client's value as echoed in a message: at most 64 characters. */

/** The raw (still encoded) path segment that `:name` of `route` matched, or undefined. */
function rawSegment(route: string, url: string, name: string): string | undefined {
  const index = route.split('/').findIndex((segment) => segment === `:${name}` || segment === `:${name}?`);
  return index < 0 ? undefined : urlPathOf(url).split('/')[index];
}

/**
 * Refuses a path parameter that does not percent-decode (`a%b`, `%ZZ`, bytes that are not UTF-8): the
 * router hands it over as null, which a route's schema would report as "expected string but received
 * null". Runs for every route, so each says the same thing, with the parameter's name and the raw value.
 */
export function checkPathParams(
  params: Readonly<Record<string, unknown>> | undefined,
  route: string,
  url: string,
) {
  if (!params) return;
  for (const name in params) {
    if (params[name] !== null) continue;
    const raw = rawSegment(route, url, name);
    throw CoreErrors.VALIDATION(
      `params.${name}: the ${name.replaceAll('_', ' ')} in the path is not valid percent-encoding${raw === undefined ? '' : ` (got ${shown(raw)})`}: a % must be followed by two hex digits, and the bytes must form UTF-8`,
    );
  }
}
