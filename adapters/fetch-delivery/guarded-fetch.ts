import type { Logger } from '../../core/log.ts';
import { createSsrfPolicy } from '../../core/net/address.ts';
import type { DeliveryErrorKind } from '../../core/ports/http-delivery.ts';
import {
  type GuardedFetch,
  GuardedFetchError,
  type GuardedRequestInit,
} from '../../core/ports/outbound-requests.ts';
import { classifyError, DeliveryFailure } from './errors.ts';
import { parseHttpsUrl, resolveAndVet } from './resolve.ts';
import { detectRuntime, hostMapOf, lazyTransport, type Runtime } from './runtime.ts';
import { RESERVED_HEADERS, type Transport } from './transport.ts';

/** Options of one guarded fetch. */
export interface GuardedFetchOptions {
  /** CIDRs its requests may reach although they are not public. Production: none. */
  allowPrivate: string[];
  /** The variable that sets `allowPrivate`, for the start-up line and the log: `SSO_ALLOW_PRIVATE`. */
  setting: string;
  /** What the requests are for, in messages and log lines: `SSO provider`. */
  purpose: string;
  /** Static host-to-IP answers used instead of DNS (DELIVERY_HOST_MAP). */
  hostMap: Record<string, string>;
  /** PEM certificates trusted in addition to the runtime's roots (the text of NODE_EXTRA_CA_CERTS). */
  extraCaPem?: string | undefined;
  log: Logger;
  /** How long a request may take, resolution included. @default 10000 */
  timeoutMs?: number;
  /** Bytes of an answer's body read at most; a longer answer fails. @default 1048576 */
  maxResponseBytes?: number;
  /** @default 'identity-service/0.1' */
  userAgent?: string;
  /** @default the runtime's: fetch on Bun, undici elsewhere */
  runtime?: Runtime;
  /** A transport of the caller's, in place of the runtime's (tests). */
  transport?: Transport;
}

// What a tenant reads: nothing about where a name pointed, which port answered or how a socket failed,
// so that an SSO credential cannot be used to map the operator's network. The log has the detail.
const UNREACHABLE = 'the provider could not be reached (the service log has the reason)';
const PUBLIC_MESSAGES: Partial<Record<DeliveryErrorKind, string>> = {
  response_too_large: 'the provider answered with more than this service reads',
};

// A body these statuses carry would make `new Response` throw.
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` through the address guard of webhook deliveries (see GuardedFetch): the same resolution,
 * vetting, pinned transports and error classification, for GET and POST with the answer's headers.
 * Its own transport, so that sign-ins never wait behind a burst of deliveries.
 *
 * @example
 * const sso = createGuardedFetch({ allowPrivate: [], setting: 'SSO_ALLOW_PRIVATE', purpose: 'SSO provider', hostMap: {}, log });
 * const res = await sso.fetch('https://accounts.google.com/.well-known/openid-configuration');
 */
export function createGuardedFetch(options: GuardedFetchOptions) {
  const policy = createSsrfPolicy(options.allowPrivate);
  if (options.allowPrivate.length)
    options.log.warn(`${options.purpose} requests may reach these private ranges (${options.setting})`, {
      allowPrivate: options.allowPrivate,
    });
  const hostMap = hostMapOf(options.hostMap);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxResponseBytes = options.maxResponseBytes ?? 1_048_576;
  const userAgent = options.userAgent ?? 'identity-service/0.1';
  const transport = lazyTransport(options.runtime ?? detectRuntime(), options.extraCaPem, options.transport);

  const fetch: GuardedFetch = async (input, init = {}) => {
    const caller = init.signal ?? undefined;
    if (caller?.aborted) throw caller.reason;
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DeliveryFailure('timeout', `no complete answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onAbort = () => deadline.abort(caller?.reason);
    caller?.addEventListener('abort', onAbort, { once: true });
    const method = (init.method ?? 'GET').toUpperCase();
    let host: string | undefined;
    let address: string | undefined;
    try {
      const url = parseHttpsUrl(String(input), `${options.purpose}s are reached`);
      host = url.host;
      const target = await resolveAndVet(url.hostname, hostMap, policy, deadline.signal, options.setting);
      address = target.address;
      const { headers, body } = requestOf(init, userAgent);
      const response = await (await transport.get()).send({
        method,
        address,
        port: Number(url.port || 443),
        host: url.host,
        serverName: target.serverName,
        path: `${url.pathname}${url.search}`,
        headers,
        body,
        signal: deadline.signal,
        maxResponseBytes,
        admitted: () => {},
      });
      if (response.truncated)
        throw new DeliveryFailure(
          'response_too_large',
          `the answer is larger than ${maxResponseBytes} bytes; it was not read`,
        );
      return new Response(NULL_BODY.has(response.status) ? null : response.body, {
        status: response.status,
        headers: headersOf(response.headers),
      });
    } catch (e) {
      // The caller's own abort is theirs to read (jose turns a TimeoutError into JWKSTimeout).
      if (caller?.aborted) throw caller.reason;
      const failure = deadline.signal.aborted ? deadline.signal.reason : e;
      const { kind, message } = classifyError(failure);
      const detail = failure instanceof DeliveryFailure ? failure.detail : undefined;
      // The host only: a path or query may carry a token.
      options.log.warn(`${options.purpose} request failed`, {
        method,
        host,
        address,
        errorKind: kind,
        error: message,
        ...(detail ? { detail } : {}),
      });
      throw new GuardedFetchError(
        kind,
        kind === 'invalid_url' ? message : (PUBLIC_MESSAGES[kind] ?? UNREACHABLE),
      );
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    }
  };

  return { fetch, close: transport.close };
}

function requestOf(
  init: GuardedRequestInit,
  userAgent: string,
): { headers: Array<[string, string]>; body: string | Uint8Array<ArrayBuffer> | undefined } {
  let given: Headers;
  try {
    given = new Headers(init.headers);
  } catch {
    throw new DeliveryFailure('invalid_url', 'a request header has an invalid name or value');
  }
  const headers = new Headers();
  for (const [name, value] of given) if (!RESERVED_HEADERS.has(name)) headers.append(name, value);
  if (!headers.has('user-agent')) headers.set('user-agent', userAgent);
  const raw = init.body ?? undefined;
  let body: string | Uint8Array<ArrayBuffer> | undefined;
  if (raw instanceof URLSearchParams) {
    body = raw.toString();
    if (!headers.has('content-type'))
      headers.set('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
  } else if (raw instanceof ArrayBuffer || raw instanceof Uint8Array) body = new Uint8Array(raw);
  else body = raw;
  return { headers: [...headers.entries()], body };
}

function headersOf(raw: Headers | Record<string, string | string[] | undefined>): Headers {
  if (raw instanceof Headers) return raw;
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of typeof value === 'string' ? [value] : value) headers.append(name, v);
  }
  return headers;
}
