import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** An address in canonical form and the ipaddr.js range it falls in (`unicast` for public addresses). */
export interface AddressClass {
  /** Canonical text: IPv4-mapped IPv6 becomes the embedded IPv4, IPv6 is compressed. */
  address: string;
  kind: 'ipv4' | 'ipv6';
  range: string;
}

/** What the policy says about one address. */
export type AddressVerdict =
  | (AddressClass & { allowed: true; allowedBy?: string })
  | (AddressClass & { allowed: false })
  | { allowed: false; address: string; kind?: undefined; range: 'invalid' };

/** Vets the addresses a delivery may connect to. */
export interface SsrfPolicy {
  check(address: string): Readonly<AddressVerdict>;
  /** The CIDRs that are allowed although they are not public, as given. */
  readonly allowPrivate: readonly string[];
}

// ipaddr.js names IPv6 ranges it knows; everything else is "unicast", including ::/96 (IPv4-compatible,
// which old kernels tunnel to the embedded IPv4) and space IANA never assigned. Only 2000::/3 is global
// unicast, so anything outside it is refused as well.
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE_V6 = ipaddr.IPv6.parseCIDR('::/96');

// Answers are shared between callers, hence frozen.
const CACHE_LIMIT = 4096;
const classified = new Map<string, Readonly<AddressClass> | undefined>();

/**
 * Classifies an IP address with ipaddr.js. IPv4-mapped IPv6 (`::ffff:127.0.0.1`, `::ffff:7f00:1`) is
 * classified as the IPv4 it embeds. Returns undefined for text that is not an IP address.
 *
 * @example classifyAddress('::ffff:7f00:1') // { address: '127.0.0.1', kind: 'ipv4', range: 'loopback' }
 */
export function classifyAddress(text: string): Readonly<AddressClass> | undefined {
  if (classified.has(text)) return classified.get(text);
  const bare = stripBrackets(text);
  // isValid parses by throwing and catching; on the delivery hot path that was 15% of Node's CPU, so
  // answers are remembered (the same few hosts and addresses come back again and again).
  const parsed: Address | undefined = ipaddr.isValid(bare) ? ipaddr.process(bare) : undefined;
  const result =
    parsed && Object.freeze({ address: parsed.toString(), kind: parsed.kind(), range: rangeOf(parsed) });
  if (classified.size >= CACHE_LIMIT) classified.clear();
  classified.set(text, result);
  return result;
}

function rangeOf(address: Address): string {
  if (address.kind() === 'ipv4') return address.range();
  const v6 = address as ipaddr.IPv6;
  const named = v6.range();
  if (named !== 'unicast') return named;
  if (v6.match(IPV4_COMPATIBLE_V6)) return 'ipv4Compatible';
  return v6.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'unassigned';
}

/** True when the address is public unicast: the only kind a delivery may reach without an allowance. */
export const isPublicAddress = (text: string): boolean => classifyAddress(text)?.range === 'unicast';

/**
 * Builds the policy from CIDRs that are allowed although not public (DELIVERY_ALLOW_PRIVATE), such as
 * `127.0.0.0/8` or `::1/128`. Production allows none. Throws on a CIDR ipaddr.js cannot parse.
 *
 * @example createSsrfPolicy(['127.0.0.0/8']).check('127.0.0.1').allowed // true
 */
export function createSsrfPolicy(allowPrivate: readonly string[] = []): SsrfPolicy {
  const ranges = allowPrivate.map((cidr) => ({ cidr, range: normaliseCidr(cidr) }));
  const verdicts = new Map<string, Readonly<AddressVerdict>>();
  const decide = (text: string): AddressVerdict => {
    const info = classifyAddress(text);
    if (!info) return { allowed: false, address: text, range: 'invalid' };
    if (info.range === 'unicast') return { ...info, allowed: true };
    const parsed = ipaddr.parse(info.address);
    const hit = ranges.find(({ range }) => range[0].kind() === parsed.kind() && parsed.match(range));
    return hit ? { ...info, allowed: true, allowedBy: hit.cidr } : { ...info, allowed: false };
  };
  return {
    allowPrivate,
    check(text) {
      let verdict = verdicts.get(text);
      if (!verdict) {
        verdict = Object.freeze(decide(text));
        if (verdicts.size >= CACHE_LIMIT) verdicts.clear();
        verdicts.set(text, verdict);
      }
      return verdict;
    },
  };
}

/**
 * The widest private ranges an allowance may name outside development: an IPv4 /8 (all of 10.0.0.0/8,
 * or loopback) and an IPv6 /32. Anything wider, 0.0.0.0/0 or ::/0 above all, would switch the SSRF
 * guard off rather than make an exception to it.
 */
export const WIDEST_ALLOWANCE = { ipv4: 8, ipv6: 32 } as const;

/**
 * True when an allowance (a CIDR of DELIVERY_ALLOW_PRIVATE) is wider than WIDEST_ALLOWANCE. IPv4-mapped
 * IPv6 is judged as the IPv4 range it covers. Throws on a CIDR ipaddr.js cannot parse.
 *
 * @example isTooWideAllowance('0.0.0.0/0') // true
 * @example isTooWideAllowance('127.0.0.0/8') // false
 */
export function isTooWideAllowance(cidr: string): boolean {
  const [address, bits] = normaliseCidr(cidr);
  return bits < WIDEST_ALLOWANCE[address.kind()];
}

// Addresses are compared in canonical form, so an allowance written as IPv4-mapped IPv6
// (::ffff:127.0.0.0/104) is turned into the IPv4 range it covers.
function normaliseCidr(cidr: string): [Address, number] {
  const [address, bits] = ipaddr.parseCIDR(cidr.trim());
  if (address.kind() === 'ipv6' && bits >= 96) {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return [v6.toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

/**
 * A URL host without the brackets of an IPv6 literal and without the trailing dots of a FQDN: all of
 * them, since the WHATWG parser keeps `localhost..` as it is and a resolver may still answer it.
 */
export function bareHost(hostname: string): string {
  return stripBrackets(hostname).replace(/\.+$/, '').toLowerCase();
}

/**
 * True when a URL's hostname is an IP address. Pass `new URL(...).hostname`: the WHATWG parser has already
 * turned `0x7f.1`, `2130706433` and `127.1` into `127.0.0.1`, so every spelling is caught.
 */
export const isIpLiteralHost = (hostname: string): boolean => ipaddr.isValid(stripBrackets(hostname));

/** True for `localhost` and names under `.localhost`, which resolve to loopback by definition (RFC 6761). */
export function isLocalhostName(hostname: string): boolean {
  const host = bareHost(hostname);
  return host === 'localhost' || host.endsWith('.localhost');
}

function stripBrackets(text: string): string {
  return text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
}
