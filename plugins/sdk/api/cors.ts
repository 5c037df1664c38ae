import { Elysia } from 'elysia';
import type { HeaderNames } from '../../../core/http/headers.ts';
import { SdkErrors } from '../errors.ts';
import type { OriginStore } from '../store/origins.ts';

/** The end-user routes a browser calls across origins. */
export const SDK_PATHS = ['/sdk/events', '/logout'] as const;

/** How long a browser may keep a preflight's answer (seconds). */
const PREFLIGHT_MAX_AGE = '600';

type SetHeaders = { headers: Record<string, string | number | undefined> };

const preflightDoc = (path: string) => ({
  detail: {
    operationId: path === '/logout' ? 'PreflightLogout' : 'PreflightSdkEvents',
    summary: `CORS preflight of ${path}`,
    description:
      'Answers 204 with Access-Control-Allow-Origin for an origin that an organization lists in its allowed origins (a preflight names no organization; the request that follows is checked against its own), 403 otherwise. Without Origin and Access-Control-Request-Method it is no preflight: 204 with Allow.',
    tags: ['SDK'],
    responses: { 204: { description: 'Preflight granted, or the methods the path takes' } },
  },
});

/** The request headers an SDK may send: the organization, the bearer token, its version, correlation, consistency. */
export function allowedRequestHeaders(names: HeaderNames): string[] {
  const prefix = names.orgId.replace(/-OrgID$/i, '');
  return [
    'content-type',
    'authorization',
    names.orgId,
    `${prefix}-SDK-Version`,
    `${prefix}-SdkVersion`,
    `${prefix}-Analytics-Correlation-ID`,
    names.consistency,
    names.consistencyTimeout,
    'x-request-id',
  ].map((h) => h.toLowerCase());
}

/**
 * CORS for the SDK routes, limited to each organization's allowed origins. A browser's actual request
 * names its organization, so it is checked against that organization's list: a listed Origin gets
 * `Access-Control-Allow-Origin` (on errors too, so the SDK can read them), another is refused with 403
 * before anything is done. A request without Origin is not a browser's cross-origin call, and CORS has
 * nothing to say about it. A preflight carries no custom header, so no organization: it is granted to an
 * origin that some organization lists, and the request that follows is checked against its own.
 */
export function createCors(origins: OriginStore, names: HeaderNames) {
  const allowHeaders = allowedRequestHeaders(names).join(', ');

  const preflight =
    (path: string) =>
    async ({ request, set }: { request: Request; set: SetHeaders & { status?: number | string } }) => {
      const origin = request.headers.get('origin');
      const method = request.headers.get('access-control-request-method');
      set.headers.vary = 'Origin';
      set.status = 204;
      // Not a preflight (no Origin or no requested method): say what the path takes.
      if (origin === null || method === null) {
        set.headers.allow = 'OPTIONS, POST';
        return undefined;
      }
      if (method !== 'POST')
        throw SdkErrors.ORIGIN_NOT_ALLOWED(
          `${path} takes POST only (the preflight asked for ${JSON.stringify(method.slice(0, 20))})`,
        );
      if (!(await origins.anyAllows(origin)))
        throw SdkErrors.ORIGIN_NOT_ALLOWED(
          `origin ${JSON.stringify(origin.slice(0, 200))} is not an allowed origin of any organization`,
        );
      set.headers['access-control-allow-origin'] = origin;
      set.headers['access-control-allow-methods'] = 'POST';
      set.headers['access-control-allow-headers'] = allowHeaders;
      set.headers['access-control-max-age'] = PREFLIGHT_MAX_AGE;
      return undefined;
    };

  return {
    /** Checks the request's Origin against the organization's list; sets the CORS answer headers. */
    async check(request: Request, orgId: string, set: SetHeaders): Promise<void> {
      const origin = request.headers.get('origin');
      set.headers.vary = 'Origin';
      if (origin === null) return;
      if (!(await origins.allows(orgId, origin)))
        throw SdkErrors.ORIGIN_NOT_ALLOWED(
          `origin ${JSON.stringify(origin.slice(0, 200))} is not one of this organization's allowed origins (PUT /organizations/allowed-origins)`,
        );
      set.headers['access-control-allow-origin'] = origin;
      set.headers['access-control-expose-headers'] = 'retry-after, www-authenticate, x-request-id';
    },

    /** OPTIONS on each SDK path: the preflight. */
    routes: new Elysia()
      .options('/sdk/events', preflight('/sdk/events'), preflightDoc('/sdk/events'))
      .options('/logout', preflight('/logout'), preflightDoc('/logout')),
  };
}

export type Cors = ReturnType<typeof createCors>;
