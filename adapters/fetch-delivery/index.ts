import type { Logger } from '../../core/log.ts';
import { createSsrfPolicy } from '../../core/net/address.ts';
import type { DeliveryRequest, DeliveryResult, HttpDelivery } from '../../core/ports/http-delivery.ts';
import { classifyError, DeliveryFailure } from './errors.ts';
import { parseHttpsUrl, resolveAndVet } from './resolve.ts';
import { detectRuntime, hostMapOf, lazyTransport, type Runtime } from './runtime.ts';
import { RESERVED_HEADERS, type Transport } from './transport.ts';

export {
  classifyAddress,
  createSsrfPolicy,
  isIpLiteralHost,
  isLocalhostName,
  isPublicAddress,
} from '../../core/net/address.ts';
export { createGuardedFetch, type GuardedFetchOptions } from './guarded-fetch.ts';

/** Options of the fetch-delivery adapter. */
export interface FetchDeliveryOptions {
  /** CIDRs a delivery may reach although they are not public (DELIVERY_ALLOW_PRIVATE). Production: none. */
  allowPrivate: string[];
  /** Static host-to-IP answers used instead of DNS (DELIVERY_HOST_MAP), e.g. `{ 'hooks.test': '127.0.0.1' }`. */
  hostMap: Record<string, string>;
  /** PEM certificates trusted in addition to the runtime's roots (the text of NODE_EXTRA_CA_CERTS). */
  extraCaPem?: string | undefined;
  log: Logger;
  /** Bytes of a response body to keep when a request does not say. @default 65536 */
  maxResponseBytes?: number;
  /** The User-Agent sent unless the request's headers carry one. @default 'identity-service-webhooks/0.1' */
  userAgent?: string;
  /** The transport to use; tests and benchmarks pin one. @default the runtime's: fetch on Bun, undici elsewhere */
  runtime?: Runtime;
  /** A transport of the caller's, in place of the runtime's (tests). @default the runtime's */
  transport?: Transport;
}

/**
 * The HttpDelivery adapter: HTTPS POSTs to customer URLs, each vetted and pinned. See the port for the
 * promises; this never throws from `post`. Header fields that belong to the transport (Host,
 * Content-Length, Connection, Transfer-Encoding and other hop-by-hop fields) are dropped from the caller's
 * headers; `ok` reflects the status only, so a 2xx may come with errorKind 'response_too_large'.
 *
 * @example
 * const delivery = createFetchDelivery({ allowPrivate: [], hostMap: {}, log });
 * const result = await delivery.post({ url, headers: { 'content-type': 'application/jwt' }, body, timeoutMs: 10_000 });
 */
export function createFetchDelivery(options: FetchDeliveryOptions): HttpDelivery {
  const policy = createSsrfPolicy(options.allowPrivate);
  // One line at start naming every exception to the SSRF guard, so an allowance is never silent.
  if (options.allowPrivate.length)
    options.log.warn('deliveries may reach these private ranges (DELIVERY_ALLOW_PRIVATE)', {
      allowPrivate: options.allowPrivate,
    });
  const hostMap = hostMapOf(options.hostMap);
  const defaultMax = options.maxResponseBytes ?? 65_536;
  const userAgent = options.userAgent ?? 'identity-service-webhooks/0.1';
  const transport = lazyTransport(options.runtime ?? detectRuntime(), options.extraCaPem, options.transport);
  const getTransport = transport.get;

  return {
    async post(request: DeliveryRequest): Promise<DeliveryResult> {
      const started = performance.now();
      const timeoutMs = Math.min(Math.max(Math.trunc(request.timeoutMs) || 0, 1), 2_147_483_647);
      const deadline = new AbortController();
      const expire = () =>
        deadline.abort(new DeliveryFailure('timeout', `no complete answer within ${timeoutMs} ms`));
      // The name's resolution counts; then the clock starts again when the transport sends the request,
      // so time spent queued behind this process's own requests is never the receiver's.
      let timer = setTimeout(expire, timeoutMs);
      const admitted = () => {
        clearTimeout(timer);
        timer = setTimeout(expire, timeoutMs);
      };
      let address: string | undefined;
      let host: string | undefined;
      try {
        const url = parseHttpsUrl(request.url, 'webhooks are delivered');
        host = url.host;
        const target = await resolveAndVet(url.hostname, hostMap, policy, deadline.signal);
        address = target.address;
        const maxResponseBytes = Math.max(0, request.maxResponseBytes ?? defaultMax);
        const response = await (await getTransport()).send({
          method: 'POST',
          address,
          port: Number(url.port || 443),
          host: url.host,
          serverName: target.serverName,
          path: `${url.pathname}${url.search}`,
          headers: requestHeaders(request.headers, userAgent),
          body: request.body,
          signal: deadline.signal,
          maxResponseBytes,
          admitted,
        });
        // Success is the status alone (the spec: events ignore the body), so a 2xx with an oversized body
        // is still ok; the caller that needs the body (the token hook) sees response_too_large.
        return {
          ok: response.status >= 200 && response.status < 300,
          status: response.status,
          ...(response.truncated
            ? {
                errorKind: 'response_too_large' as const,
                error: `the response body is larger than ${maxResponseBytes} bytes; only those were read`,
              }
            : {}),
          latencyMs: performance.now() - started,
          body: new TextDecoder().decode(response.body),
          address,
        };
      } catch (e) {
        // Whatever a stage threw while the deadline was passing is a symptom of the deadline.
        const { kind, message } = deadline.signal.aborted
          ? classifyError(deadline.signal.reason)
          : classifyError(e);
        const detail = e instanceof DeliveryFailure ? e.detail : undefined;
        // The host only: webhook paths often carry a token. A refusal's detail (the addresses a name
        // resolved to) is kept from the result, so the operator's log is where it goes.
        if (detail) options.log.info('delivery refused', { host, errorKind: kind, detail });
        else options.log.debug('delivery failed', { host, address, errorKind: kind, error: message });
        return {
          ok: false,
          errorKind: kind,
          error: message,
          latencyMs: performance.now() - started,
          body: '',
          ...(address ? { address } : {}),
        };
      } finally {
        clearTimeout(timer);
      }
    },
    close: transport.close,
  } satisfies HttpDelivery;
}

// Headers validates names and values the same way on every runtime and joins repeated values with ", "
// (RFC 9110 section 5.3), so an array arrives as one comma-joined field whatever the transport.
function requestHeaders(input: DeliveryRequest['headers'], userAgent: string): Array<[string, string]> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(input)) {
    if (RESERVED_HEADERS.has(name.toLowerCase())) continue;
    try {
      for (const v of typeof value === 'string' ? [value] : value) headers.append(name, v);
    } catch {
      // Name only: custom header values are secrets, and this message is stored with the attempt.
      throw new DeliveryFailure(
        'invalid_url',
        `the header ${JSON.stringify(name)} has an invalid name or value`,
      );
    }
  }
  if (!headers.has('user-agent')) headers.set('user-agent', userAgent);
  return [...headers.entries()];
}
