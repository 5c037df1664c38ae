import { isRegisteredMethod } from '../http/methods.ts';
import type { HistogramSeries, Metrics } from './types.ts';

/** Where the front door reports each answer. */
export interface RequestObserver {
  /** `route` is the pattern that took the request; undefined when none did. */
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
}

/** The `route` of a request no route took: an unknown path or method, or one refused before routing. */
export const NO_ROUTE = 'none';
/** The `method` of a request whose method is outside the HTTP method registry. */
export const OTHER_METHOD = 'OTHER';

export const HTTP_REQUEST_DURATION = 'identity_http_request_duration_seconds';

/**
 * Requests by method, route pattern and status, with their latency: one histogram, whose `_count` is
 * the number of requests. Every label is bounded: the route is the pattern (never the path), a method
 * outside the registry is OTHER. Each series is looked up through maps keyed by the values as they
 * come, so a request builds no string and no object of its own.
 */
export function createRequestMetrics(metrics: Metrics): RequestObserver {
  if (!metrics.enabled) return { observe() {} };
  const duration = metrics.histogram({
    name: HTTP_REQUEST_DURATION,
    help: 'HTTP requests by method, route pattern and status: the time from arrival to the answer',
    labelNames: ['method', 'route', 'status'],
  });
  const series = new Map<string, Map<string, Map<number, HistogramSeries>>>();
  return {
    observe(method, route = NO_ROUTE, status, seconds) {
      const m = isRegisteredMethod(method) ? method : OTHER_METHOD;
      let byRoute = series.get(m);
      if (byRoute === undefined) {
        byRoute = new Map();
        series.set(m, byRoute);
      }
      let byStatus = byRoute.get(route);
      if (byStatus === undefined) {
        byStatus = new Map();
        byRoute.set(route, byStatus);
      }
      let one = byStatus.get(status);
      if (one === undefined) {
        one = duration.labels({ method: m, route, status: String(status) });
        byStatus.set(status, one);
      }
      one.observe(seconds);
    },
  };
}
