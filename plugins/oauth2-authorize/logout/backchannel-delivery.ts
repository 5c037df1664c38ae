import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { nextAfterFailure, RETRY_WINDOW_MS } from '../../../core/delivery/retry-schedule.ts';
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
import type { LogoutDeliveryMetrics } from './backchannel-metrics.ts';
import { hostOf, noticeOf } from './backchannel-notice.ts';

/** How long a client's back-channel logout endpoint may take to answer. @default 10000 */
export const DEFAULT_LOGOUT_TIMEOUT_MS = 10_000;
/** Bytes of an answer read at most: only its status matters. */
const MAX_RESPONSE_BYTES = 1024;

export interface LogoutDeliveryDeps {
  delivery: HttpDelivery;
  clock: Clock;
  log: Logger;
  /** Signs each attempt's logout token (the tokenIssuer capability). */
  issuer: Pick<TokenIssuer, 'signLogoutToken'>;
  count: LogoutDeliveryMetrics;
  timeoutMs?: number;
}

/**
 * Failures the address guard decides by the URI alone (not https, a private address without
 * DELIVERY_ALLOW_PRIVATE): another attempt would be refused the same way, so the notice is dropped at once.
 */
const REFUSED: ReadonlySet<string> = new Set(['invalid_url', 'ssrf_refused']);

/** Why an attempt failed, in words for the operator's log. */
function reasonOf(result: DeliveryResult): string {
  if (result.status === undefined) return `${result.errorKind ?? 'network'}: ${result.error ?? 'no answer'}`;
  if (result.status >= 300 && result.status < 400)
    return `answered ${result.status}; redirects are not followed`;
  return `answered ${result.status}; only 2xx is success`;
}

/**
 * The consumer of BACKCHANNEL_LOGOUT_TOPIC: for each notice, signs a fresh logout token (new `jti`,
 * `iat` now) and POSTs it as `logout_token` in a form body through HttpDelivery (the address guard, no
 * redirects, a timeout). A 2xx answer is done. A refusal by the address guard is dropped at once; any
 * other failure is retried on the webhooks' schedule (1, 3, 7, 15 and 25 minutes after the notice was
 * queued), then dropped with a warning that names the organization, the client, the host and the last
 * reason.
 */
export function createLogoutDeliveryHandler(deps: LogoutDeliveryDeps) {
  const { delivery, clock, log, issuer, count } = deps;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_LOGOUT_TIMEOUT_MS;

  async function post(n: NonNullable<ReturnType<typeof noticeOf>>): Promise<DeliveryResult | string> {
    let jwt: string;
    try {
      const { orgId, clientId, personId, sessionId } = n;
      const iss = n.issuer !== undefined ? { issuer: n.issuer } : {};
      jwt = await issuer.signLogoutToken({ orgId, clientId, personId, sessionId, ...iss });
    } catch (err) {
      return `signing the logout token failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    return delivery.post({
      url: n.uri,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: jwt }).toString(),
      timeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
    });
  }

  return async function handle(msg: Delivered<JsonValue>): Promise<Outcome> {
    const n = noticeOf(msg.payload);
    if (!n) {
      log.warn('back-channel logout message dropped: not a notice of this service', { message_id: msg.id });
      return drop('not a back-channel logout notice');
    }
    const fields = {
      org_id: n.orgId,
      client_id: n.clientId,
      host: hostOf(n.uri),
      session_id: n.sessionId,
      attempt: msg.attempt,
    };
    const startedAt = clock.now();
    const result = await post(n);
    if (typeof result !== 'string' && result.ok) {
      count('delivered');
      log.info('back-channel logout delivered', { ...fields, status: result.status });
      return ack();
    }
    const reason = typeof result === 'string' ? result : reasonOf(result);
    const refused = typeof result !== 'string' && REFUSED.has(result.errorKind ?? '');
    const next = refused ? { drop: true as const } : nextAfterFailure(msg.attempt, startedAt, n.queuedAt);
    if ('retryAt' in next) {
      const delayMs = Math.max(0, next.retryAt - clock.now());
      count('retried');
      log.info('back-channel logout not accepted; retrying', { ...fields, reason, retry_in_ms: delayMs });
      return retry(delayMs);
    }
    const why = refused
      ? `the address guard refused the URI (${reason})`
      : `gave up after ${msg.attempt} attempts: the retry window of ${RETRY_WINDOW_MS / 60_000} minutes ended (${reason})`;
    count('dropped');
    log.warn('back-channel logout dropped', { ...fields, reason: why });
    return drop(why);
  };
}
