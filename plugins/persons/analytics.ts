import * as v from 'valibot';
import type { AnalyticsContext } from '../../core/capabilities/person-directory.ts';
import { isUuid, uuidv7 } from '../../core/ids.ts';

const isIp = (s: string) => v.is(v.pipe(v.string(), v.ip()), s);

/** The header a client may send to correlate the events its requests cause. */
export const CORRELATION_HEADER = 'x-analytics-correlation-id';

/** What a server knows of the connection (Elysia's `server`); absent under `app.handle`. */
export interface ConnectionInfo {
  requestIP?(request: Request): { address: string } | null;
}

/**
 * The analytics of a request: the client address is the first valid address of `X-Forwarded-For`
 * (the service expects to sit behind a proxy that sets it), else the connection's; the user agent and
 * origin as sent; the correlation ID from `X-Analytics-Correlation-ID` when it is a UUID.
 */
export function analyticsContextOf(request: Request, server?: ConnectionInfo | null): AnalyticsContext {
  const forwarded = request.headers
    .get('x-forwarded-for')
    ?.split(',')
    .map((s) => s.trim())
    .find(isIp);
  let connection: string | undefined;
  try {
    connection = server?.requestIP?.(request)?.address;
  } catch {
    connection = undefined;
  }
  const correlation = request.headers.get(CORRELATION_HEADER)?.trim();
  return {
    clientIpAddress: forwarded ?? (connection && isIp(connection) ? connection : undefined),
    userAgent: request.headers.get('user-agent') ?? undefined,
    origin: request.headers.get('origin') ?? undefined,
    correlationId: correlation && isUuid(correlation) ? correlation.toLowerCase() : undefined,
  };
}

/**
 * The events' `analytics_metadata`. The spec's member holds the correlation ID and the client address
 * only (the user agent belongs to `browser_metadata`, which persons events do not carry); an unknown
 * address is written `0.0.0.0`, since the member is required.
 */
export const analyticsMetadata = (a: AnalyticsContext) => ({
  analytics_correlation_id: a.correlationId ?? uuidv7(),
  client_ip_address: a.clientIpAddress ?? '0.0.0.0',
});
