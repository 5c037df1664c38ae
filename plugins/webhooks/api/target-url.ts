import { isIpLiteralHost, isLocalhostName } from '../../../core/net/address.ts';

/** Longest target_url accepted, in characters. */
export const MAX_TARGET_URL_LENGTH = 2048;
/** Longest host name and label (RFC 1035), the root's trailing dot not counted. */
const MAX_HOST_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

/** A letter-digit-hyphen label (RFC 1123) as the parser leaves it: lower case, IDNs in punycode. */
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
/** `https://` and then something: `https:/x` and `https:///x` parse, taking the path for a host. */
const HAS_AUTHORITY = /^https:\/\/[^/\\?#]/i;

export type TargetUrlCheck = { ok: true; url: string } | { ok: false; problem: string };

/** A public host name: LDH labels, none empty, within the DNS lengths. */
function hostProblem(host: string): string | undefined {
  if (host.length > MAX_HOST_LENGTH)
    return `must have a host of at most ${MAX_HOST_LENGTH} characters (got ${host.length})`;
  for (const label of host.split('.')) {
    if (label === '') return `must not have an empty label in its host (host ${host})`;
    if (label.length > MAX_LABEL_LENGTH)
      return `must have host labels of at most ${MAX_LABEL_LENGTH} characters (host ${host})`;
    if (!LDH_LABEL.test(label))
      return `must have a host of letters, digits and hyphens, with no label starting or ending with a hyphen (label ${JSON.stringify(label)})`;
  }
  return undefined;
}

/**
 * Checks a webhook's target_url against the spec's rules and returns it in a canonical form, which is
 * what uniqueness is judged on: the WHATWG serialisation (lower-case scheme and host, IDNs in
 * punycode, default port dropped) without the trailing dot of a fully qualified host, so
 * `https://a.example./x` and `https://a.example/x` are one URL.
 *
 * 1. an absolute `https:` URL with an authority in the text itself, without credentials or control
 *    characters (the parser would drop tabs and newlines silently), and not port 0;
 * 2. a host that is neither localhost (any case, trailing dots, any subdomain of it) nor an IP address
 *    in any spelling: the WHATWG parser turns `2130706433`, `0x7f.1`, `0177.0.0.1` and `127.1` into
 *    `127.0.0.1`, and brackets IPv6 (IPv4-mapped included), so one check on the parsed host catches
 *    every spelling; otherwise a DNS name of LDH labels (no `_`, `*` or empty label);
 * 3. no query and no fragment, not even an empty `?` or `#`.
 *
 * Uniqueness within the organization (rule 4) is the database's unique index.
 */
export function checkTargetUrl(input: string): TargetUrlCheck {
  const text = input.trim();
  if (text.length === 0) return { ok: false, problem: 'must not be empty' };
  if (text.length > MAX_TARGET_URL_LENGTH)
    return { ok: false, problem: `must be at most ${MAX_TARGET_URL_LENGTH} characters` };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(text))
    return { ok: false, problem: 'must not contain control characters' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, problem: `must be an absolute https URL (got ${JSON.stringify(input)})` };
  }
  if (url.protocol !== 'https:')
    return { ok: false, problem: `must use https, not ${url.protocol.replace(/:$/, '')}` };
  if (!HAS_AUTHORITY.test(text))
    return { ok: false, problem: `must name its host right after https:// (got ${JSON.stringify(input)})` };
  if (url.username || url.password)
    return { ok: false, problem: 'must not carry credentials; send them in custom_headers' };
  if (!url.hostname) return { ok: false, problem: 'must have a host' };
  if (isLocalhostName(url.hostname))
    return { ok: false, problem: `must not name localhost (host ${url.hostname})` };
  // The root's trailing dot names the same host: dropped, so it neither hides an address nor makes a
  // second webhook for one URL.
  const host = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (isIpLiteralHost(host.replace(/\.+$/, '')))
    return { ok: false, problem: `must name a host, not an IP address (host ${url.hostname})` };
  const bad = hostProblem(host);
  if (bad) return { ok: false, problem: bad };
  if (url.port === '0') return { ok: false, problem: 'must not use port 0 (ports are 1 to 65535)' };
  // `https://a.example/?` has an empty search but still a query: judge the serialisation.
  if (url.search || url.href.includes('?')) return { ok: false, problem: 'must not have a query' };
  if (url.hash || url.href.includes('#')) return { ok: false, problem: 'must not have a fragment' };
  if (host !== url.hostname) url.hostname = host;
  return { ok: true, url: url.href };
}
