import { lookup } from 'node:dns/promises';
import { bareHost, classifyAddress, type SsrfPolicy } from '../../core/net/address.ts';
import { DeliveryFailure } from './errors.ts';

/** Where a delivery may connect: the vetted address and the name to present to the receiver. */
export interface VettedTarget {
  /** The address to connect to, in canonical form. Every address the host resolved to was vetted. */
  address: string;
  /** The hostname for SNI and certificate verification; undefined when the URL names an IP address. */
  serverName: string | undefined;
}

/**
 * Resolves the URL's host (an IP literal, a `hostMap` entry, or DNS through the system resolver) and
 * vets every address it resolves to (see `vetAddresses`).
 */
export async function resolveAndVet(
  hostname: string,
  hostMap: ReadonlyMap<string, string>,
  policy: SsrfPolicy,
  signal: AbortSignal,
  setting = DELIVERY_SETTING,
): Promise<VettedTarget> {
  const host = bareHost(hostname);
  if (classifyAddress(host)) return vetAddresses(host, [host], policy, true, setting);
  const mapped = hostMap.get(host);
  return vetAddresses(host, mapped ? [mapped] : await lookupAll(host, signal), policy, false, setting);
}

/** The setting that names the private ranges deliveries may reach. */
const DELIVERY_SETTING = 'DELIVERY_ALLOW_PRIVATE';

/**
 * Refuses the host unless every address passes the policy: a name that answers with one public and one
 * private address must not get through on the lucky pick. Throws a DeliveryFailure ('ssrf_refused')
 * whose message names no resolved address (the detail, for the log, does).
 *
 * @example vetAddresses('x.example', ['8.8.8.8', '10.0.0.1'], createSsrfPolicy([]), false) // throws
 */
export function vetAddresses(
  host: string,
  addresses: readonly string[],
  policy: SsrfPolicy,
  literal: boolean,
  setting = DELIVERY_SETTING,
): VettedTarget {
  const verdicts = addresses.map((a) => policy.check(a));
  const refused = verdicts.find((v) => !v.allowed);
  if (refused) {
    const why = `is not a public address (${refused.range}) and no allowPrivate (${setting}) range covers it`;
    // A literal is what the tenant wrote; a name's answer is the operator's network: the tenant learns
    // that it was refused, the log learns where it pointed.
    if (literal)
      throw new DeliveryFailure(
        'ssrf_refused',
        `${host}${host === refused.address ? '' : ` (${refused.address})`} ${why}`,
      );
    throw new DeliveryFailure(
      'ssrf_refused',
      `${host} resolves to a refused (non-public) address; deliveries reach public addresses only`,
      { detail: `${host} resolves to ${addresses.join(', ')}: ${refused.address} ${why}` },
    );
  }
  if (verdicts.length === 0) throw new DeliveryFailure('dns', `${host} has no addresses`);
  return { address: preferred(verdicts.map((v) => v.address)), serverName: literal ? undefined : host };
}

// Containers often have no IPv6 route, and only one address is pinned (there is no happy-eyeballs
// fallback once we connect to a literal), so an IPv4 answer is preferred when there is one.
function preferred(addresses: string[]): string {
  return addresses.find((a) => !a.includes(':')) ?? addresses[0]!;
}

async function lookupAll(host: string, signal: AbortSignal): Promise<string[]> {
  if (!host) throw new DeliveryFailure('invalid_url', 'the URL has no host');
  // getaddrinfo cannot be cancelled; racing it with the deadline keeps the timeout honest.
  const answer = lookup(host, { all: true, verbatim: true });
  answer.catch(() => {});
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const records = await Promise.race([answer, aborted]);
    if (records.length === 0) throw new DeliveryFailure('dns', `${host} has no addresses`);
    return records.map((r) => r.address);
  } catch (e) {
    if (e instanceof DeliveryFailure || signal.aborted) throw e;
    const code = (e as { code?: unknown }).code;
    throw new DeliveryFailure(
      'dns',
      `cannot resolve ${host}: ${typeof code === 'string' ? code : String(e)}`,
      {
        cause: e,
      },
    );
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The URL of a guarded request: https, a host, no credentials. `what` names the requests in the message
 * (`webhooks are delivered`, `SSO providers are reached`).
 */
export function parseHttpsUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new DeliveryFailure('invalid_url', `not a URL: ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'https:')
    throw new DeliveryFailure('invalid_url', `${what} over HTTPS only, not ${url.protocol}`);
  if (url.username || url.password)
    throw new DeliveryFailure('invalid_url', 'credentials in the URL are not sent; use a custom header');
  if (!url.hostname) throw new DeliveryFailure('invalid_url', 'the URL has no host');
  return url;
}
