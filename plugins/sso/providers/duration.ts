const UNIT_SECONDS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/**
 * Seconds of a Go `time.Duration` string ("1m", "24h", "1h30m", "1.5h"), as the reference defines
 * `secret_lifetime`; undefined when the text is not one. Go has no day unit: 30 days is "720h".
 */
export function parseGoDuration(text: string): number | undefined {
  const part = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  if (text === '' || text === '0') return text === '0' ? 0 : undefined;
  let at = 0;
  let total = 0;
  while (at < text.length) {
    part.lastIndex = at;
    const m = part.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
    at = part.lastIndex;
  }
  return total;
}
