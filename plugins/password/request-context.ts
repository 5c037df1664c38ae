import * as v from 'valibot';
import type { AnalyticsContext } from '../../core/capabilities/person-directory.ts';
import type { BrowserMetadata } from '../../core/events/shared-types.ts';
import type { HeaderNames } from '../../core/http/headers.ts';
import { isUuid } from '../../core/ids.ts';

const ipSchema = v.pipe(v.string(), v.ip());
const isIp = (s: string) => v.is(ipSchema, s);

/** What the sign-in routes know of the caller: its address (when known), analytics and browser metadata. */
export interface RequestContext {
  /** The client's address, or undefined when neither the proxy header nor the socket tells it. */
  clientIp: string | undefined;
  analytics: AnalyticsContext;
  browser: BrowserMetadata;
}

/** Bun's server gives the socket's address; other adapters may have no `requestIP` or throw. */
interface AddressSource {
  requestIP?(request: Request): { address: string } | null;
}

/**
 * Reads the request context. `clientIpHeader` names a header a trusted proxy sets (the first address of
 * `X-Forwarded-For`, say); without it the socket's address is used where the runtime tells it (Bun).
 */
export function requestContextReader(names: HeaderNames, clientIpHeader: string | undefined) {
  const prefix = names.orgId.replace(/-OrgID$/i, '');
  const sdkVersion = `${prefix}-SDK-Version`;
  const correlation = `${prefix}-Analytics-Correlation-ID`;

  function clientIpOf(request: Request, server: AddressSource | null): string | undefined {
    if (clientIpHeader) {
      const first = request.headers.get(clientIpHeader)?.split(',')[0]?.trim();
      return first && isIp(first) ? first : undefined;
    }
    try {
      const address = server?.requestIP?.(request)?.address;
      return address && isIp(address) ? address : undefined;
    } catch {
      return undefined;
    }
  }

  return (request: Request, server: AddressSource | null): RequestContext => {
    const h = request.headers;
    const clientIp = clientIpOf(request, server);
    const userAgent = h.get('user-agent') ?? '';
    const origin = h.get('origin') ?? undefined;
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
