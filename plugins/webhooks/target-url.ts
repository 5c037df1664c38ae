import { isIpLiteralHost, isLocalhostName } from '../../adapters/fetch-delivery/index.ts';

/** Longest target_url accepted, in characters. */
export const MAX_TARGET_URL_LENGTH = 2048;

export type TargetUrlCheck = { ok: true; url: string } | { ok: false; problem: string };

/**
 * Checks a webhook's target_url against the spec's rules and returns it in the WHATWG serialisation
 * (lower-case scheme and host, default port dropped), which is what uniqueness is judged on:
 *
 * 1. an absolute `https:` URL, without credentials;
 * 2. a non-empty host that is neither localhost (any case, a trailing dot, any subdomain of it) nor an
 *    IP address in any spelling: the WHATWG parser turns `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1`
 *    into `127.0.0.1`, and brackets IPv6 (IPv4-mapped included), so one check on the parsed host
 *    catches every spelling;
 * 3. no query and no fragment, not even an empty `?` or `#`.
 *
 * Uniqueness within the organization (rule 4) is the database's unique index.
 */
export function checkTargetUrl(input: string): TargetUrlCheck {
  const text = input.trim();
  if (text.length === 0) return { ok: false, problem: 'must not be empty' };
  if (text.length > MAX_TARGET_URL_LENGTH)
    return { ok: false, problem: `must be at most ${MAX_TARGET_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, problem: `must be an absolute https URL (got ${JSON.stringify(input)})` };
  }
  if (url.protocol !== 'https:')
    return { ok: false, problem: `must use https, not ${url.protocol.replace(/:$/, '')}` };
  if (url.username || url.password)
    return { ok: false, problem: 'must not carry credentials; send them in custom_headers' };
  if (!url.hostname) return { ok: false, problem: 'must have a host' };
  if (isLocalhostName(url.hostname))
    return { ok: false, problem: `must not name localhost (host ${url.hostname})` };
  if (isIpLiteralHost(url.hostname))
    return { ok: false, problem: `must name a host, not an IP address (host ${url.hostname})` };
  // `https://a.example/?` has an empty search but still a query: judge the serialisation.
  if (url.search || url.href.includes('?')) return { ok: false, problem: 'must not have a query' };
  if (url.hash || url.href.includes('#')) return { ok: false, problem: 'must not have a fragment' };
  return { ok: true, url: url.href };
}
