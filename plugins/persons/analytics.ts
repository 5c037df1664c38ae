import type { AnalyticsContext } from '../../core/capabilities/person-directory.ts';
import { requestContextOf } from '../../core/http/client.ts';
import { isUuid, uuidv7 } from '../../core/ids.ts';

/** The header a client may send to correlate the events its requests cause. */
export const CORRELATION_HEADER = 'x-analytics-correlation-id';

/**
 * The analytics of a request: the client address, user agent and origin as the front door saw them
 * (core's requestContextOf: the socket's address unless TRUSTED_PROXY_HOPS trusts a proxy); the
 * correlation ID from `X-Analytics-Correlation-ID` when it is a UUID.
 */
export function analyticsContextOf(request: Request): AnalyticsContext {
  const { clientIp, userAgent, origin } = requestContextOf(request);
  const correlation = request.headers.get(CORRELATION_HEADER)?.trim();
  return {
    clientIpAddress: clientIp,
    userAgent,
    origin,
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
