import ipaddr from 'ipaddr.js';

/** What the service knows of the caller of a request. */
export interface RequestContext {
  /**
   * The client's IP address in canonical form (IPv4-mapped IPv6 as IPv4): the socket's peer, or with
   * TRUSTED_PROXY_HOPS set, the address the outermost trusted proxy saw. Undefined when neither tells
   * (a request handed to the app in-process).
   */
  clientIp?: string;
  /** The User-Agent header as sent. */
  userAgent?: string;
  /** The Origin header as sent. */
  origin?: string;
}

/**
 * Client addresses of the requests in flight, set by the front door; nothing a client sends reaches it.
 * The front door records what it was given (the peer and the trusted hops); the address is worked out
 * on first read, since most requests never ask for it.
 */
const clientIps = new WeakMap<Request, string | { peer: string | undefined; hops: number }>();

/** An address as text in canonical form, or undefined when it is not one (a port or brackets may wrap it). */
export function canonicalIp(text: string | undefined): string | undefined {
  if (typeof text !== 'string' || !text) return undefined;
  let bare = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare);
  if (bracketed) bare = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(bare)) bare = bare.slice(0, bare.indexOf(':'));
  bare = bare.replace(/%.*$/, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare).toString();
  if (!ipaddr.IPv6.isValid(bare)) return undefined;
  return ipaddr.process(bare).toString();
}

/**
 * The client's address. With no trusted proxy (`trustedHops` 0) it is the socket's peer, whatever the
 * headers say. Behind `trustedHops` proxies that each append the address they saw to X-Forwarded-For,
 * it is the entry that many places from the right: the entries left of it are the client's own to
 * write, so they are never believed.
 *
 * @example clientIpOf(headersOf('x-forwarded-for: 6.6.6.6, 198.51.100.7'), '10.0.0.2', 1) // '198.51.100.7'
 */
export function clientIpOf(
  headers: Headers,
  peer: string | undefined,
  trustedHops: number,
): string | undefined {
  if (trustedHops > 0) {
    const forwarded = (headers.get('x-forwarded-for') ?? '').split(',').filter((s) => s.trim() !== '');
    // Fewer entries than proxies: the request skipped the outer ones; the leftmost is what the first saw.
    const seen = forwarded.length ? forwarded[Math.max(0, forwarded.length - trustedHops)] : undefined;
    if (seen !== undefined) return canonicalIp(seen);
  }
  return canonicalIp(peer);
}

/** Records a request's client address; the front door calls it for the request the app will handle. */
export function rememberClientIp(request: Request, address: string | undefined): void {
  if (address) clientIps.set(request, address);
}

/**
 * Records where a request came from (the socket's peer, the trusted proxy hops) for its client address
 * to be worked out by `clientIpOf` when something asks: the front door calls it on every request.
 */
export function rememberClientPeer(request: Request, peer: string | undefined, trustedHops: number): void {
  if (peer !== undefined || trustedHops > 0) clientIps.set(request, { peer, hops: trustedHops });
}

function clientIpFor(request: Request): string | undefined {
  const known = clientIps.get(request);
  if (known === undefined || typeof known === 'string') return known;
  const ip = clientIpOf(request.headers, known.peer, known.hops);
  if (ip) clientIps.set(request, ip);
  else clientIps.delete(request);
  return ip;
}

/**
 * The caller of a request as the front door saw it: client address, user agent and origin. What plugins
 * read for events' analytics_metadata, the token_minted hook's request_metadata and per-address limits.
 *
 * @example const { clientIp } = requestContextOf(request); if (clientIp) await limiter.take(`${orgId}|${clientIp}`)
 */
export function requestContextOf(request: Request): RequestContext {
  const clientIp = clientIpFor(request);
  const userAgent = request.headers.get('user-agent');
  const origin = request.headers.get('origin');
  return {
    ...(clientIp ? { clientIp } : {}),
    ...(userAgent ? { userAgent } : {}),
    ...(origin ? { origin } : {}),
  };
}

/**
 * The rate-limit bucket of a client address: an IPv4 address itself (an IPv4-mapped IPv6 one too), an
 * IPv6 address its /64, the block one subscriber is usually given, so that a client cannot escape a
 * per-address limit by stepping through the addresses of its own network.
 *
 * @example addressBucket('2001:db8:0:1::7') // '2001:db8:0:1::/64'
 */
export function addressBucket(ip: string): string {
  const address = ip.replace(/%.*$/, '').toLowerCase();
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? front
      : [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  const prefix = groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '') || '0');
  return `${prefix.join(':')}::/64`;
}
