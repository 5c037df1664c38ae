import { errorEnvelope } from '../http/envelope.ts';
import { urlPathOf } from '../http/request-target.ts';
import type { PrometheusMetrics } from './prometheus.ts';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { 'cache-control': 'no-store', ...headers } });

/**
 * The metrics listener's whole app (METRICS_PORT): GET /metrics in the Prometheus text format and
 * GET /healthz; anything else is a 404, another method a 405. Nothing of the API is reachable there,
 * and /metrics is not served on the public port.
 */
export function metricsEndpoint(metrics: PrometheusMetrics): (request: Request) => Promise<Response> {
  return async (request) => {
    const path = urlPathOf(request.url);
    if (path !== '/metrics' && path !== '/healthz')
      return json(
        404,
        errorEnvelope(
          404,
          `no route for ${request.method} ${path}: this port serves GET /metrics and /healthz`,
        ),
      );
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return json(
        405,
        errorEnvelope(405, `method ${request.method} is not allowed on ${path}; allowed: GET, HEAD`),
        {
          allow: 'GET, HEAD',
        },
      );
    if (path === '/healthz') return json(200, { result: { status: 'ok' } });
    const text = await metrics.text();
    return new Response(request.method === 'HEAD' ? null : text, {
      headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' },
    });
  };
}
