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

/** The header prefix of a deployment (`Service` unless HEADER_PREFIX says otherwise). */
const prefixOf = (names: HeaderNames) => names.orgId.replace(/-OrgID$/i, '');

/**
 * The correlation ID a client sent, lower-cased, when it is a UUID: `<prefix>-Analytics-Correlation-ID`,
 * else `X-Analytics-Correlation-ID` (both accepted on every route that publishes events).
 */
export function correlationReader(names: HeaderNames) {
  const prefixed = `${prefixOf(names)}-Analytics-Correlation-ID`;
  return (h: Headers): string | undefined => {
    const sent = (h.get(prefixed) ?? h.get('x-analytics-correlation-id'))?.trim();
    return sent && isUuid(sent) ? sent.toLowerCase() : undefined;
  };
}

/**
 * The analytics of an API request (persons, mint-token, the token endpoint): the client address, user
 * agent and origin as the front door saw them (core's requestContextOf: the socket's address unless
 * TRUSTED_PROXY_HOPS trusts a proxy) and the correlation ID the client sent, if any.
 */
export function analyticsReader(names: HeaderNames) {
  const correlation = correlationReader(names);
  return (request: Request): AnalyticsContext => {
    const { clientIp, userAgent, origin } = requestContextOf(request);
    const correlationId = correlation(request.headers);
    return {
      ...(clientIp ? { clientIpAddress: clientIp } : {}),
      ...(userAgent ? { userAgent } : {}),
      ...(origin ? { origin } : {}),
      ...(correlationId ? { correlationId } : {}),
    };
  };
}

/**
 * Reads the request context: the client address, user agent and origin as the front door saw them
 * (core's requestContextOf: the socket's address unless TRUSTED_PROXY_HOPS trusts a proxy).
 */
export function requestContextReader(names: HeaderNames) {
  const sdkVersion = `${prefixOf(names)}-SDK-Version`;
  // The reference's spelling (its OptionalSdkVersionHeader, SlashID-SdkVersion), for clients written to it.
  const sdkVersionAlias = `${prefixOf(names)}-SdkVersion`;
  const analyticsOf = analyticsReader(names);

  return (request: Request): RequestContext => {
    const h = request.headers;
    const analytics = analyticsOf(request);
    // One ID for every event of this request (the sign-in's and the issuer's), the client's when sent.
    analytics.correlationId ??= crypto.randomUUID();
    return {
      clientIp: analytics.clientIpAddress,
      analytics,
      browser: {
        user_agent: analytics.userAgent ?? '',
        window_location: h.get('referer') ?? analytics.origin ?? '',
        service_sdk_version: h.get(sdkVersion) ?? h.get(sdkVersionAlias) ?? '',
      },
    };
  };
}

/** The spec's AnalyticsMetadata: an unknown address is written as the unspecified `0.0.0.0`. */
export const analyticsMetadata = (a: AnalyticsContext) => ({
  analytics_correlation_id: a.correlationId ?? crypto.randomUUID(),
  client_ip_address: a.clientIpAddress ?? '0.0.0.0',
});
