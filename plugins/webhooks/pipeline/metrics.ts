import type { CounterSeries, HistogramSeries, Metrics } from '../../../core/metrics/types.ts';

/** How a delivery attempt ended: delivered, to be tried again, or given up on. */
export type DeliveryOutcome = 'succeeded' | 'retried' | 'dropped';

export interface WebhookMetrics {
  /** Counts a delivery's attempt, and observes its POST's latency when one was made. */
  delivery(outcome: DeliveryOutcome, seconds?: number): void;
  /** Observes one run of the token_minted hook (all its webhooks), passed or blocked. */
  tokenMinted(blocked: boolean, seconds: number): void;
  /** Counts a token_minted call that failed after its attempts, by why (`timeout`, `http_status`...). */
  tokenMintedFailure(reason: string): void;
}

const OUTCOMES: readonly DeliveryOutcome[] = ['succeeded', 'retried', 'dropped'];

/** The webhooks plugin's series, each taken once so that a delivery looks nothing up. */
export function webhookMetrics(metrics: Metrics): WebhookMetrics {
  const deliveries = metrics.counter({
    name: 'identity_webhook_deliveries_total',
    help: 'Event delivery attempts by outcome: succeeded, retried (failed, tried again later), dropped (failed for good, or nothing left to deliver)',
    labelNames: ['outcome'],
  });
  const latency = metrics.histogram({
    name: 'identity_webhook_delivery_duration_seconds',
    help: "Event delivery attempts' POST latency, by outcome",
    labelNames: ['outcome'],
  });
  const hookRuns = metrics.histogram({
    name: 'identity_token_minted_hook_duration_seconds',
    help: 'Runs of the token_minted hook (its webhooks called at once, retries included) by outcome: passed or blocked',
    labelNames: ['outcome'],
  });
  const hookFailures = metrics.counter({
    name: 'identity_token_minted_hook_failures_total',
    help: 'token_minted webhook calls that blocked a token, by reason (timeout, http_status, invalid_response, ...)',
    labelNames: ['reason'],
  });
  const counted = new Map<DeliveryOutcome, { count: CounterSeries; latency: HistogramSeries }>(
    OUTCOMES.map((outcome) => [
      outcome,
      { count: deliveries.labels({ outcome }), latency: latency.labels({ outcome }) },
    ]),
  );
  const passed = hookRuns.labels({ outcome: 'passed' });
  const blockedRuns = hookRuns.labels({ outcome: 'blocked' });
  return {
    delivery(outcome, seconds) {
      const series = counted.get(outcome)!;
      series.count.inc();
      if (seconds !== undefined) series.latency.observe(seconds);
    },
    tokenMinted(blocked, seconds) {
      (blocked ? blockedRuns : passed).observe(seconds);
    },
    tokenMintedFailure(reason) {
      hookFailures.labels({ reason }).inc();
    },
  };
}
