/**
 * Duration strings as Go's `time.ParseDuration` reads them ("500ms", "10s", "1m30s", "1.5s"), which is
 * what the reference API documents for a webhook's timeout. Values are kept in nanoseconds.
 */

const UNIT_NS: Record<string, number> = {
  ns: 1,
  us: 1e3,
  µs: 1e3,
  μs: 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

const PART = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * One `<number><unit>` in nanoseconds as Go computes it: the whole part times the unit, plus the
 * fraction's digits times (unit / 10^digits), truncated ("1.5ns" is 1ns, "0.3s" exactly 300ms).
 */
function partNs(number: string, unit: number): number {
  const [whole = '', fraction = ''] = number.split('.');
  const ns = Number(whole || '0') * unit;
  return fraction ? ns + Math.trunc(Number(fraction) * (unit / 10 ** fraction.length)) : ns;
}

/** Parses a Go duration string to nanoseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  while (s.length > 0) {
    const m = PART.exec(s);
    if (!m) return undefined;
    total += partNs(m[1]!, UNIT_NS[m[2]!]!);
    s = s.slice(m[0].length);
  }
  return Number.isFinite(total) ? sign * total : undefined;
}

/** Formats nanoseconds as Go's `Duration.String()` does: "0s", "500ms", "1.5s", "1m30s", "1h0m0s". */
export function formatDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  const abs = Math.abs(ns);
  if (abs < 1e9) {
    const [unit, per] = abs < 1e3 ? ['ns', 1] : abs < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    return `${sign}${trim(abs / per)}${unit}`;
  }
  const h = Math.floor(abs / 3600e9);
  const m = Math.floor((abs % 3600e9) / 60e9);
  const s = (abs % 60e9) / 1e9;
  if (h > 0) return `${sign}${h}h${m}m${trim(s)}s`;
  if (m > 0) return `${sign}${m}m${trim(s)}s`;
  return `${sign}${trim(s)}s`;
}

const trim = (n: number) => String(Number(n.toFixed(9)));

/** The longest timeout a webhook may set: 20 seconds. */
export const MAX_TIMEOUT_NS = 20e9;

/**
 * Reads a webhook timeout: a duration above 0 and at most 20 s, or zero (`"0s"`, what a webhook without
 * one reads back as), which unsets it like null, so that a webhook read and written back is accepted.
 * Returns the nanoseconds (null: unset) or a message that says which rule the value broke.
 */
export function parseTimeout(text: string): { ns: number | null } | { problem: string } {
  const ns = parseDuration(text.trim());
  if (ns === undefined)
    return {
      problem: `must be a duration such as "500ms", "10s" or "1m" (units ns, us, ms, s, m, h); got ${JSON.stringify(text)}`,
    };
  if (ns === 0) return { ns: null };
  if (ns < 0)
    return {
      problem: `must not be negative (got ${JSON.stringify(text)}); "0s", null or leaving it out uses the defaults (10s for events, 2s for sync hooks)`,
    };
  if (ns > MAX_TIMEOUT_NS) return { problem: `must be at most 20s (got ${JSON.stringify(text)})` };
  return { ns };
}
