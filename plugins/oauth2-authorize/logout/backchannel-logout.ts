import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { Logger } from '../../../core/log.ts';
import type { Metrics } from '../../../core/metrics/types.ts';
import type { Worker } from '../../../core/plugin.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { EventBus, Subscription } from '../../../core/ports/event-bus.ts';
import type { HttpDelivery } from '../../../core/ports/http-delivery.ts';
import type { Transaction } from '../../../core/ports/storage.ts';
import { createLogoutDeliveryHandler } from './backchannel-delivery.ts';
import { logoutDeliveryMetrics } from './backchannel-metrics.ts';
import { BACKCHANNEL_LOGOUT_TOPIC, type LogoutNotice, noticeMessage } from './backchannel-notice.ts';

export interface BackchannelLogoutDeps {
  bus: EventBus;
  /** The address guard's POST: `ctx.delivery` (DELIVERY_ALLOW_PRIVATE, no redirects, a size cap). */
  delivery: HttpDelivery;
  clock: Clock;
  log: Logger;
  /** Signs each attempt's logout token: the tokenIssuer capability. */
  issuer: Pick<TokenIssuer, 'signLogoutToken'>;
  /** Where attempts are counted by outcome. @default none */
  metrics?: Metrics;
  /** How long a client's endpoint may take to answer, in real milliseconds. @default 10000 */
  timeoutMs?: number;
  /** Notices delivered at once by each replica. @default 32 */
  concurrency?: number;
}

/** What createBackchannelLogout gives the plugin: the sender its logout paths call, and the consumer. */
export interface BackchannelLogout {
  /**
   * Queues a logout token for each notice, durably: resolved once the bus holds them (with `tx`, they
   * commit or roll back with that transaction, on pg-queue and on JetStream's outbox alike, and go out
   * only after it commits). The tokens are signed when delivered, never here. No notices, no publish.
   */
  send(notices: readonly LogoutNotice[], options?: { tx?: Transaction }): Promise<void>;
  /** Consumes the notices on every replica: start it with the plugin's workers. */
  readonly worker: Worker;
}

/** A claimed notice may take the timeout, a signature and the answer before another replica takes it. */
const LEASE_REAL_MS = 30_000;

/**
 * Durable delivery of OpenID Connect Back-Channel Logout 1.0 logout tokens, on the event bus like
 * webhook deliveries: `send` publishes one message per notice on BACKCHANNEL_LOGOUT_TOPIC; the worker
 * signs a fresh logout token for each attempt and POSTs `logout_token=<jwt>` to the client's URI through
 * the address guard, retrying on the webhooks' schedule for 30 minutes (createLogoutDeliveryHandler).
 *
 * @example
 * const backchannel = createBackchannelLogout({ bus: ctx.bus, delivery: ctx.delivery, clock: ctx.clock, log, issuer });
 * await backchannel.send([{ orgId, clientId, uri: client.backchannel_logout_uri, personId, sessionId }], { tx });
 */
export function createBackchannelLogout(deps: BackchannelLogoutDeps): BackchannelLogout {
  const { bus, clock } = deps;
  const log = deps.log.child({ component: 'backchannel-logout' });
  const handle = createLogoutDeliveryHandler({
    delivery: deps.delivery,
    clock,
    log,
    issuer: deps.issuer,
    count: deps.metrics ? logoutDeliveryMetrics(deps.metrics) : () => {},
    ...(deps.timeoutMs !== undefined ? { timeoutMs: deps.timeoutMs } : {}),
  });

  let subscription: Subscription | undefined;
  return {
    async send(notices, options = {}) {
      if (notices.length === 0) return;
      const queuedAt = clock.now();
      await bus.publish(
        BACKCHANNEL_LOGOUT_TOPIC,
        notices.map((n) => noticeMessage(n, queuedAt)),
        options,
      );
    },
    worker: {
      name: 'backchannel-logout',
      start() {
        subscription = bus.consume(BACKCHANNEL_LOGOUT_TOPIC, handle, {
          concurrency: deps.concurrency ?? 32,
          leaseMs: LEASE_REAL_MS * clock.rate,
        });
      },
      async stop() {
        await subscription?.stop();
        subscription = undefined;
      },
    },
  };
}
