import { createMetrics } from './make.ts';
import type { CounterSeries, GaugeSeries, HistogramSeries, Metrics } from './types.ts';

const counter: CounterSeries = { inc() {} };
const histogram: HistogramSeries = { observe() {} };
const gauge: GaugeSeries = { set() {}, inc() {}, dec() {} };

/**
 * Metrics that keep nothing, for a service without METRICS_PORT: specs are checked all the same, and
 * every series is one shared object whose methods do nothing.
 */
export const createNoMetrics = (): Metrics =>
  createMetrics({
    enabled: false,
    counter: () => () => counter,
    histogram: () => () => histogram,
    gauge: () => () => gauge,
  });
