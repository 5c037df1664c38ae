import { nextAfterFailure, RETRY_WINDOW_MS } from '../../../core/delivery/retry-schedule.ts';
import { triggerListName } from '../../../core/events/trigger-names.ts';
import type { Logger } from '../../../core/log.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import {
  ack,
  type Delivered,
  drop,
  type JsonValue,
  type Outcome,
  retry,
} from '../../../core/ports/event-bus.ts';
import type { DeliveryResult, HttpDelivery } from '../../../core/ports/http-delivery.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Signer } from '../../../core/ports/signer.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { createHeaderOpener } from '../store/custom-headers.ts';
import { type AttemptRecord, type AttemptRecorder, RESPONSE_EXCERPT_CHARS } from './attempts.ts';
import type { DeliveryMessage } from './enqueue.ts';
import type { FreshDeliveries } from './fresh-deliveries.ts';
import { createDeliveryLoader, type DeliveryToAttempt, type EventCache } from './loader.ts';
import type { DeliveryOutcome, WebhookMetrics } from './metrics.ts';

/** Timeout of an event delivery when the webhook sets none (spec, Limits). */
export const DEFAULT_EVENT_TIMEOUT_MS = 10_000;
/** Lifetime of a webhook JWT (spec: `exp` is 5 minutes after `iat`). */
export const JWT_LIFETIME_S = 300;
/** Bytes of a response read at most: the body is ignored, only its first bytes are recorded. */
const MAX_RESPONSE_BYTES = 1024;

export interface DeliveryDeps {
  storage: Storage;
  signer: Signer;
  secrets: SecretBox;
  delivery: HttpDelivery;
  clock: Clock;
  log: Logger;
  recorder: AttemptRecorder;
  /** The `iss` of every webhook JWT: the deployment's PUBLIC_BASE_URL. */
  issuer: string;
  /** Events the router fanned out lately, shared with it. */
  events: EventCache;
  /** Deliveries the router has just committed, for their first attempt. */
  fresh: FreshDeliveries;
  /** Where attempts are counted by outcome, with their latency. */
  metrics: WebhookMetrics;
}

/** The metrics' name for what the bus is told. */
const OUTCOME: Record<Outcome['kind'], DeliveryOutcome> = {
  ack: 'succeeded',
  retry: 'retried',
  drop: 'dropped',
};

/** Why an attempt failed, in words an operator reads in the delivery log. */
export function failureOf(result: DeliveryResult): { kind: string; message: string } {
  if (result.status === undefined)
    return { kind: result.errorKind ?? 'network', message: result.error ?? 'no answer' };
  if (result.status >= 300 && result.status < 400)
    return { kind: 'http_status', message: `answered ${result.status}; redirects are not followed` };
  return { kind: 'http_status', message: `answered ${result.status}; only 2xx is success` };
}

/**
 * The delivery consumer: for one message of the deliveries topic, loads the delivery with its webhook,
 * signs a fresh JWT (new `jti`, `iat` now, `exp` 5 minutes later, `sub` the event_id) and POSTs it
 * through HttpDelivery. Only 2xx succeeds. A failure is retried after 1, 2, 4, 8, 10, 10... minutes
 * while the next attempt stays within 30 minutes of the first, then the delivery is dropped. Every
 * attempt is recorded (group commit) before the bus is told the outcome.
 */
export function createDeliveryHandler(deps: DeliveryDeps) {
  const { clock, recorder, metrics } = deps;
  const loader = createDeliveryLoader(deps.storage, deps.events, deps.fresh);
  const openHeaders = createHeaderOpener(deps.secrets);

  async function attempt(d: DeliveryToAttempt, webhook: NonNullable<DeliveryToAttempt['webhook']>) {
    const startedAt = clock.now();
    const jti = crypto.randomUUID();
    const iat = Math.floor(startedAt / 1000);
    const claims = {
      jti,
      aud: d.orgId,
      sub: d.eventId,
      iss: deps.issuer,
      iat,
      exp: iat + JWT_LIFETIME_S,
      webhook_id: d.webhookId,
      target_url: webhook.targetUrl,
      trigger_type: d.triggerType,
      trigger_name: d.triggerType === 'event' ? triggerListName(d.triggerName) : d.triggerName,
      trigger_content: d.content as Record<string, JsonValue>,
    };
    // Off the event loop's thread, which goes on with other deliveries meanwhile (BENCHMARKS.md: a few
    // percent more deliveries a second than signing on it, more with many webhooks).
    const jwt = await deps.signer.sign(d.orgId, claims, { offThread: true });
    const custom = await openHeaders(d.webhookId, webhook.customHeaders);
    const result = await deps.delivery.post({
      url: webhook.targetUrl,
      headers: { ...custom, 'content-type': 'application/jwt' },
      body: jwt,
      timeoutMs: webhook.timeoutNs ? Math.ceil(webhook.timeoutNs / 1e6) : DEFAULT_EVENT_TIMEOUT_MS,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
    return { startedAt, jti, result };
  }

  return async function handle(msg: Delivered<DeliveryMessage>): Promise<Outcome> {
    const id = msg.payload?.delivery_id;
    const d = typeof id === 'string' ? await loader.load(id, msg.attempt) : undefined;
    if (!d) return drop(`no delivery ${String(id)}`);
    // Settled already: this is the message again after a crash between the record and the ack.
    if (d.status === 'succeeded' || d.status === 'dropped') return ack();
    const base = { deliveryId: d.id, webhookId: d.webhookId, firstAttemptAt: d.firstAttemptAt };
    if (!d.webhook || d.content === null) {
      const reason = d.webhook ? 'the event is no longer stored' : 'the webhook was deleted';
      const now = clock.now();
      await recorder.record({
        ...base,
        status: 'dropped',
        nextAttemptAt: null,
        settledAt: now,
        lastError: reason,
        attempt: null,
      });
      metrics.delivery('dropped');
      return drop(reason);
    }
    const { startedAt, jti, result } = await attempt(d, d.webhook);
    const n = d.attempts + 1;
    const first = d.firstAttemptAt ?? startedAt;
    const common = {
      n,
      jti,
      startedAt,
      latencyMs: Math.round(result.latencyMs * 100) / 100,
      ok: result.ok,
      statusCode: result.status ?? null,
      response: result.body ? result.body.slice(0, RESPONSE_EXCERPT_CHARS) : null,
    };
    let record: AttemptRecord;
    let outcome: Outcome;
    if (result.ok) {
      record = {
        ...base,
        firstAttemptAt: first,
        status: 'succeeded',
        nextAttemptAt: null,
        settledAt: clock.now(),
        lastError: null,
        attempt: { ...common, errorKind: null, error: null, outcome: 'succeeded', retryAt: null },
      };
      outcome = ack();
    } else {
      const failure = failureOf(result);
      const next = nextAfterFailure(n, startedAt, first);
      const attemptFields = { ...common, errorKind: failure.kind, error: failure.message };
      if ('retryAt' in next) {
        const at = next.retryAt;
        record = {
          ...base,
          firstAttemptAt: first,
          status: 'retrying',
          nextAttemptAt: at,
          settledAt: null,
          lastError: failure.message,
          attempt: { ...attemptFields, outcome: 'retry', retryAt: at },
        };
        outcome = retry(0); // the delay is set once the record has committed, below
      } else {
        const reason = `gave up after ${n} attempts: the retry window of ${RETRY_WINDOW_MS / 60_000} minutes ended (${failure.message})`;
        record = {
          ...base,
          firstAttemptAt: first,
          status: 'dropped',
          nextAttemptAt: null,
          settledAt: clock.now(),
          lastError: reason,
          attempt: { ...attemptFields, outcome: 'dropped', retryAt: null },
        };
        outcome = drop(reason);
      }
    }
    await recorder.record(record);
    metrics.delivery(OUTCOME[outcome.kind], result.latencyMs / 1000);
    // Counted from now, so the next attempt lands on its schedule whatever this one's latency and record.
    if (outcome.kind === 'retry' && record.nextAttemptAt !== null)
      return retry(Math.max(0, record.nextAttemptAt - clock.now()));
    return outcome;
  };
}
