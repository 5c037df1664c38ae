import type { CounterSeries, Metrics } from '../../../core/metrics/types.ts';

/** How an attempt to deliver a logout token ended. */
export type LogoutDeliveryOutcome = 'delivered' | 'retried' | 'dropped';

/** Counts attempts by outcome: `identity_backchannel_logout_deliveries_total{outcome}`. */
export type LogoutDeliveryMetrics = (outcome: LogoutDeliveryOutcome) => void;

const OUTCOMES: readonly LogoutDeliveryOutcome[] = ['delivered', 'retried', 'dropped'];

/** The series of back-channel logout deliveries, taken once so that an attempt looks nothing up. */
export function logoutDeliveryMetrics(metrics: Metrics): LogoutDeliveryMetrics {
  const attempts = metrics.counter({
    name: 'identity_backchannel_logout_deliveries_total',
    help: 'Back-channel logout token delivery attempts by outcome: delivered, retried (failed, tried again later), dropped (refused by the address guard, or failed at the end of the retry window)',
    labelNames: ['outcome'],
  });
  const series = new Map<LogoutDeliveryOutcome, CounterSeries>(
    OUTCOMES.map((outcome) => [outcome, attempts.labels({ outcome })]),
  );
  return (outcome) => series.get(outcome)?.inc();
}
