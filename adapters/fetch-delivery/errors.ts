import type { DeliveryErrorKind } from '../../core/ports/http-delivery.ts';

/**
 * A delivery stage failed for a known reason; `post` turns it into a result, never lets it escape. The
 * message goes to the result (and so to the tenant); `detail`, when given, goes to the operator's log only.
 */
export class DeliveryFailure extends Error {
  constructor(
    readonly kind: DeliveryErrorKind,
    message: string,
    options?: { cause?: unknown; detail?: string },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeliveryFailure';
    this.detail = options?.detail;
  }
  /** What only the operator may see, such as the private address a host resolved to. */
  readonly detail: string | undefined;
}

// Certificate verification codes from OpenSSL (as Node, Deno and Bun report them), plus the TLS error
// families, so an untrusted or misnamed certificate reads as 'tls' rather than a generic network error.
const TLS_CODES = new Set([
  'EPROTO',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
const TLS_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'ERR_OSSL_', 'CERT_', 'UNABLE_TO_'];
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ConnectionRefused',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'FailedToOpenSocket',
]);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA', 'DNSException']);

/** Maps anything a transport threw to an error kind and a message naming the cause. */
export function classifyError(error: unknown): { kind: DeliveryErrorKind; message: string } {
  if (error instanceof DeliveryFailure) return { kind: error.kind, message: error.message };
  const chain = causes(error);
  const codes = chain.map((e) => e.code).filter((c): c is string => typeof c === 'string');
  const detail = describe(chain);
  const has = (test: (code: string) => boolean) => codes.some(test);
  if (has((c) => TLS_CODES.has(c) || TLS_PREFIXES.some((p) => c.startsWith(p))))
    return { kind: 'tls', message: `TLS failed: ${detail}` };
  if (has((c) => CONNECT_CODES.has(c))) return { kind: 'connect', message: `cannot connect: ${detail}` };
  if (has((c) => TIMEOUT_CODES.has(c)) || chain.some((e) => e.name === 'TimeoutError'))
    return { kind: 'timeout', message: `timed out: ${detail}` };
  if (has((c) => DNS_CODES.has(c))) return { kind: 'dns', message: `cannot resolve: ${detail}` };
  return { kind: 'network', message: `request failed: ${detail}` };
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

// fetch wraps the socket's error in a TypeError and undici sometimes nests one more level: look a few deep.
function causes(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current = error;
  while (out.length < 5 && typeof current === 'object' && current !== null) {
    const e = current as ErrorLike;
    out.push(e);
    current = e.cause;
  }
  if (out.length === 0) out.push({ message: String(error) });
  return out;
}

function describe(chain: ErrorLike[]): string {
  const parts: string[] = [];
  for (const e of chain) {
    const code = typeof e.code === 'string' ? e.code : '';
    // Bun appends the URL (whose path may hold a token) and a hint for developers at a console.
    const message =
      typeof e.message === 'string'
        ? e.message.replace(/\. For more information, pass .*$/, '').replace(/ fetching "[^"]*"/, '')
        : '';
    const text = message.includes(code) ? message : [code, message].filter(Boolean).join(' ');
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
  }
  return parts.join(' <- ') || 'unknown error';
}
