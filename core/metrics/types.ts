/**
 * The metrics seam: what core and plugins count, observe and gauge, with no Prometheus type in sight.
 * The service binds it to prom-client when METRICS_PORT is set and to a no-op otherwise; callers do the
 * same thing either way.
 */

/** The values of a series, one per label name the metric was made with: `{ grant_type: 'refresh_token' }`. */
export type MetricLabels<L extends string> = { readonly [K in L]: string };

/** What every metric is made with. */
export interface MetricSpec<L extends string> {
  /**
   * `[a-z_][a-z0-9_]*`, starting with your plugin's id (`plan_claims_lookups_total`); a counter's ends in
   * `_total`, a duration's in `_seconds`. Making one name twice with the same type and labels gives the
   * same metric; with another, start-up stops.
   */
  name: string;
  /** One line for the `# HELP` comment. */
  help: string;
  /**
   * The label names, fixed when the metric is made. Each label's values must come from a small bounded
   * set (a route pattern, an outcome, an event name): never an id, a path or anything a client chose.
   * @default []
   */
  labelNames?: readonly L[];
}

export interface HistogramSpec<L extends string> extends MetricSpec<L> {
  /** Upper bounds of the buckets, in the unit of the name (seconds). @default LATENCY_BUCKETS */
  buckets?: readonly number[];
}

export interface GaugeSpec<L extends string> extends MetricSpec<L> {
  /**
   * Called on every scrape, before the gauge is read: sets the series it knows, and those it does not set
   * are absent from that scrape. A collect that throws leaves the gauge empty and is logged.
   * @example collect: async (set) => { for (const q of await queues()) set({ topic: q.topic }, q.depth); }
   */
  collect?: (set: (labels: MetricLabels<L>, value: number) => void) => void | Promise<void>;
}

/** One series of a counter. */
export interface CounterSeries {
  /** Adds `by` (at least 0). @default 1 */
  inc(by?: number): void;
}

/** One series of a histogram. */
export interface HistogramSeries {
  /** Records one value (a duration in seconds, say). */
  observe(value: number): void;
}

/** One series of a gauge. */
export interface GaugeSeries {
  set(value: number): void;
  inc(by?: number): void;
  dec(by?: number): void;
}

/**
 * A metric with fixed label names. `labels(values)` answers the series of those values and keeps it:
 * on a hot path, take the series once (per grant type, per outcome) and call it, so that a request costs
 * no lookup and no allocation of its own.
 */
export interface LabelledMetric<L extends string, S> {
  readonly name: string;
  labels(values: MetricLabels<L>): S;
}

export type CounterMetric<L extends string> = LabelledMetric<L, CounterSeries>;
export type HistogramMetric<L extends string> = LabelledMetric<L, HistogramSeries>;
export type GaugeMetric<L extends string> = LabelledMetric<L, GaugeSeries>;

/**
 * Makes metrics (`ctx.metrics` in a plugin's setup). Make them once, in setup, and keep them.
 *
 * @example
 * const lookups = ctx.metrics.counter({ name: 'plan_claims_lookups_total', help: 'Plan lookups by result', labelNames: ['result'] });
 * const found = lookups.labels({ result: 'found' });   // once
 * found.inc();                                          // per lookup
 */
export interface Metrics {
  /** False when metrics are off (no METRICS_PORT): every series is a no-op then. */
  readonly enabled: boolean;
  counter<const L extends string = never>(spec: MetricSpec<L>): CounterMetric<L>;
  histogram<const L extends string = never>(spec: HistogramSpec<L>): HistogramMetric<L>;
  gauge<const L extends string = never>(spec: GaugeSpec<L>): GaugeMetric<L>;
}

/** Buckets for request and call durations, in seconds: 1 ms to 10 s. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** Metric names as Prometheus takes them, and as this service asks. */
export const METRIC_NAME_RE = /^[a-z_][a-z0-9_]*$/;
/** Label names (`__` is Prometheus's own, `le` the histogram's). */
export const LABEL_NAME_RE = /^[a-z_][a-z0-9_]*$/;
