import { parsePrometheus } from '../helpers/prometheus.ts';
import { check, type SmokeTarget } from './http.ts';

/**
 * The metrics listener (METRICS_PORT): the Prometheus text of the requests the smoke made, by route
 * pattern; nothing else served there, and /metrics absent from the public port. Run last.
 */
export async function smokeMetrics(t: SmokeTarget & { metricsUrl: string }): Promise<string[]> {
  const res = await fetch(`${t.metricsUrl}/metrics`);
  const text = await res.text();
  check(
    res.status === 200 && (res.headers.get('content-type') ?? '').startsWith('text/plain; version=0.0.4'),
    `GET /metrics on METRICS_PORT answers the Prometheus text (got ${res.status} ${res.headers.get('content-type')})`,
  );
  const scrape = parsePrometheus(text);
  const count = 'identity_http_request_duration_seconds_count';
  const seen = scrape.value(count, { method: 'GET', route: '/organizations', status: '200' }) ?? 0;
  check(seen >= 1, `GET /organizations 200 is counted under its route (got ${seen})`);
  const tokens =
    scrape.value('identity_oauth2_tokens_issued_total', { grant_type: 'client_credentials' }) ?? 0;
  check(tokens >= 1, `the client_credentials grant is counted (got ${tokens})`);
  const publicPort = await fetch(`${t.baseUrl}/metrics`);
  await publicPort.body?.cancel();
  check(publicPort.status === 404, `/metrics is not served on the public port (got ${publicPort.status})`);
  const api = await fetch(`${t.metricsUrl}/organizations`);
  await api.body?.cancel();
  check(api.status === 404, `the API is not served on METRICS_PORT (got ${api.status})`);
  return ['metrics on METRICS_PORT only'];
}
