// The request context of an end user's sign-in, shared by every factor (password, SSO).
import type { AnalyticsContext } from '../capabilities/person-directory.ts';
import type { BrowserMetadata } from '../events/shared-types.ts';
import { isUuid } from '../ids.ts';
import { requestContextOf } from './client.ts';
import type { HeaderNames } from './headers.ts';

/** What the sign-in routes know of the caller: its address (when known), analytics and browser metadata. */
export interface RequestContext {
  /** The client's address, or undefined when the front door knows none (an in-process request). */
  clientIp: string | undefined;
  analytics: AnalyticsContext;
  browser: BrowserMetadata;
}

/**
 * Reads the request context: the client address, user agent and origin as the front door saw them
 * (core's requestContextOf: the socket's address unless TRUSTED_PROXY_HOPS trusts a proxy).
 */
export function requestContextReader(names: HeaderNames) {
  const prefix = names.orgId.replace(/-OrgID$/i, '');
  const sdkVersion = `${prefix}-SDK-Version`;
  const correlation = `${prefix}-Analytics-Correlation-ID`;

  return (request: Request): RequestContext => {
    const h = request.headers;
    const { clientIp, userAgent = '', origin } = requestContextOf(request);
    const sent = h.get(correlation) ?? '';
    // One ID for every event of this request (the sign-in's and the issuer's), the client's when sent.
    const correlationId = isUuid(sent) ? sent.toLowerCase() : crypto.randomUUID();
    return {
      clientIp,
      analytics: {
        ...(clientIp ? { clientIpAddress: clientIp } : {}),
        ...(userAgent ? { userAgent } : {}),
        ...(origin ? { origin } : {}),
        correlationId,
      },
      browser: {
        user_agent: userAgent,
        window_location: h.get('referer') ?? origin ?? '',
        service_sdk_version: h.get(sdkVersion) ?? '',
      },
    };
  };
}

/** The spec's AnalyticsMetadata: an unknown address is written as the unspecified `0.0.0.0`. */
export const analyticsMetadata = (a: AnalyticsContext) => ({
  analytics_correlation_id: a.correlationId ?? crypto.randomUUID(),
  client_ip_address: a.clientIpAddress ?? '0.0.0.0',
});
