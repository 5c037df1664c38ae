import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../log.ts';
import { createMetrics, type MetricsBackend } from './make.ts';
import type { Metrics } from './types.ts';

/** Metrics kept in a prom-client registry of their own (never the global one: a process may run many services). */
export interface PrometheusMetrics extends Metrics {
  /** Every metric in the Prometheus text format (0.0.4), collecting the gauges first. */
  text(): Promise<string>;
  readonly contentType: string;
}

/**
 * The metrics seam over prom-client. Series are prom-client's own label children, taken once per set of
 * values; gauges with a `collect` are reset and set again on every scrape.
 */
export function createPrometheusMetrics(log: Logger): PrometheusMetrics {
  const registry = new Registry();
  const registers = [registry];
  const backend: MetricsBackend = {
    enabled: true,
    counter(spec) {
      const counter = new Counter({ ...spec, registers });
      return (values) => counter.labels(values);
    },
    histogram(spec, buckets) {
      const histogram = new Histogram({ ...spec, buckets: [...buckets], registers });
      return (values) => histogram.labels(values);
    },
    gauge(spec, collect) {
      const gauge = new Gauge({
        ...spec,
        registers,
        ...(collect
          ? {
              async collect() {
                // A series the collect does not set is absent (reset alone leaves a label-less one at 0).
                const clear = () => {
                  this.reset();
                  if (spec.labelNames.length === 0) this.remove({});
                };
                clear();
                try {
                  await collect((values, value) => this.set(values, value));
                } catch (err) {
                  clear();
                  log.error('collecting a gauge failed; it is left out of this scrape', {
                    metric: spec.name,
                    err,
                  });
                }
              },
            }
          : {}),
      });
      return (values) => {
        const series = gauge.labels(values);
        return {
          set: (v: number) => series.set(v),
          inc: (by?: number) => series.inc(by),
          dec: (by?: number) => series.dec(by),
        };
      };
    },
  };
  return {
    ...createMetrics(backend),
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}
