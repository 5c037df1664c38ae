import {
  type CounterSeries,
  type GaugeSeries,
  type GaugeSpec,
  type HistogramSeries,
  type HistogramSpec,
  LABEL_NAME_RE,
  LATENCY_BUCKETS,
  type LabelledMetric,
  METRIC_NAME_RE,
  type MetricLabels,
  type MetricSpec,
  type Metrics,
} from './types.ts';

export type MetricKind = 'counter' | 'histogram' | 'gauge';

/** A checked spec, as a backend receives it. */
export interface CheckedSpec {
  name: string;
  help: string;
  labelNames: readonly string[];
}

/** Where series live: prom-client, or nowhere. Each maker answers the series of one set of values. */
export interface MetricsBackend {
  readonly enabled: boolean;
  counter(spec: CheckedSpec): (values: Record<string, string>) => CounterSeries;
  histogram(
    spec: CheckedSpec,
    buckets: readonly number[],
  ): (values: Record<string, string>) => HistogramSeries;
  gauge(
    spec: CheckedSpec,
    collect: GaugeSpec<string>['collect'],
  ): (values: Record<string, string>) => GaugeSeries;
}

function check(kind: MetricKind, spec: MetricSpec<string>): CheckedSpec {
  const labelNames = spec.labelNames ?? [];
  if (!METRIC_NAME_RE.test(spec.name))
    throw new Error(`metric name ${JSON.stringify(spec.name)} must match ${METRIC_NAME_RE}`);
  if (kind === 'counter' && !spec.name.endsWith('_total'))
    throw new Error(`counter ${spec.name} must have a name ending in _total`);
  for (const label of labelNames)
    if (!LABEL_NAME_RE.test(label) || label.startsWith('__') || (kind === 'histogram' && label === 'le'))
      throw new Error(`metric ${spec.name}: label name ${JSON.stringify(label)} is not allowed`);
  if (new Set(labelNames).size !== labelNames.length)
    throw new Error(`metric ${spec.name} names a label twice`);
  return { name: spec.name, help: spec.help, labelNames };
}

function checkBuckets(name: string, buckets: readonly number[]): readonly number[] {
  const ok =
    buckets.length > 0 && buckets.every((b, i) => Number.isFinite(b) && (i === 0 || b > buckets[i - 1]!));
  if (!ok) throw new Error(`histogram ${name}: buckets must be finite and increasing`);
  return buckets;
}

/**
 * Metrics over a backend: specs checked the same way whether metrics are on or off (a plugin's wrong
 * name stops start-up either way), one metric per name, and each metric's series kept by their values.
 */
export function createMetrics(backend: MetricsBackend): Metrics {
  const made = new Map<string, { kind: MetricKind; labels: string; metric: unknown }>();

  function make<S>(
    kind: MetricKind,
    spec: MetricSpec<string>,
    seriesOf: (checked: CheckedSpec) => (values: Record<string, string>) => S,
  ): LabelledMetric<string, S> {
    const checked = check(kind, spec);
    const labels = checked.labelNames.join(',');
    const earlier = made.get(checked.name);
    if (earlier) {
      if (earlier.kind !== kind || earlier.labels !== labels)
        throw new Error(
          `metric ${checked.name} is made twice: as a ${earlier.kind} with labels [${earlier.labels}] and as a ${kind} with labels [${labels}]`,
        );
      return earlier.metric as LabelledMetric<string, S>;
    }
    const maker = seriesOf(checked);
    const names = checked.labelNames;
    const series = new Map<string, S>();
    const metric: LabelledMetric<string, S> = {
      name: checked.name,
      labels(values: MetricLabels<string>): S {
        // One label (most metrics) is its own key: no string is built to find the series.
        const key = names.length === 1 ? values[names[0]!]! : names.map((n) => values[n]).join('\u0001');
        let found = series.get(key);
        if (found === undefined) {
          const copy: Record<string, string> = {};
          for (const n of names) {
            const value = values[n];
            if (typeof value !== 'string')
              throw new Error(`metric ${checked.name}: label ${n} needs a string value`);
            copy[n] = value;
          }
          found = maker(copy);
          series.set(key, found);
        }
        return found;
      },
    };
    made.set(checked.name, { kind, labels, metric });
    return metric;
  }

  return {
    enabled: backend.enabled,
    counter: (spec) => make('counter', spec, (c) => backend.counter(c)),
    histogram: (spec: HistogramSpec<string>) =>
      make('histogram', spec, (c) =>
        backend.histogram(c, checkBuckets(c.name, spec.buckets ?? LATENCY_BUCKETS)),
      ),
    gauge: (spec: GaugeSpec<string>) => make('gauge', spec, (c) => backend.gauge(c, spec.collect)),
  };
}
