/** Percentiles and formatting shared by the benchmarks. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface Summary {
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
}

export function summarize(latenciesMs: number[], elapsedMs: number): Summary {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    count: sorted.length,
    perSecond: (sorted.length / elapsedMs) * 1000,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
  };
}

export const fmtRate = (n: number) =>
  n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n >= 1000 ? `${(n / 1000).toFixed(2)}k` : n.toFixed(0);
export const fmtMs = (n: number) =>
  Number.isNaN(n) ? '-' : n < 1 ? n.toFixed(2) : n < 10 ? n.toFixed(1) : n.toFixed(0);

/** A markdown table row. */
export const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
