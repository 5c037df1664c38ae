import { Elysia } from 'elysia';
import { EVENTS_TOPIC, type ServiceEvent } from '../../core/events/types.ts';
import { definePlugin, type Worker } from '../../core/plugin.ts';
import type { Subscription } from '../../core/ports/event-bus.ts';
import { createTokenBuckets } from '../../core/rate-limit/index.ts';
import { beforeTokenIssued } from '../../core/tokens/before-token-issued.ts';
import { operatorRoutes } from './api/deliveries.ts';
import { jwksRoutes } from './api/jwks.ts';
import { testEventRoutes } from './api/test-events.ts';
import { triggerRoutes } from './api/triggers.ts';
import { webhookRoutes } from './api/webhooks.ts';
import { migrations } from './migrations/index.ts';
import { type WebhooksSettingOptions, webhooksSettings } from './options.ts';
import { createAttemptRecorder } from './pipeline/attempts.ts';
import { createDeliveryHandler } from './pipeline/delivery.ts';
import { DELIVERIES_TOPIC, type DeliveryMessage } from './pipeline/enqueue.ts';
import { createFreshDeliveries } from './pipeline/fresh-deliveries.ts';
import { createHookLog } from './pipeline/hook-log.ts';
import { createEventCache } from './pipeline/loader.ts';
import { webhookMetrics } from './pipeline/metrics.ts';
import { retentionWorker } from './pipeline/retention.ts';
import { createRouter } from './pipeline/router.ts';
import {
  createTokenMintedHook,
  DEFAULT_TOKEN_MINTED_DEADLINE_MS,
  TOKEN_MINTED,
} from './pipeline/token-minted.ts';
import { RESEND_RATE_LIMIT } from './schema.ts';
import { createHeaderOpener, customHeadersSealed } from './store/custom-headers.ts';
import { createOperatorStore } from './store/deliveries.ts';
import { createHookTargets } from './store/hook-targets.ts';
import { createWebhookStore } from './store/webhooks.ts';

export { WebhookErrors } from './errors.ts';
export { DELIVERIES_TOPIC } from './pipeline/enqueue.ts';

/** Options of the webhooks plugin: those of its settings (options.ts), and these. */
export interface WebhooksOptions extends WebhooksSettingOptions {
  /** Deliveries attempted at once by each replica: signing and HTTP overlap across them. @default 256 */
  deliveryConcurrency?: number;
  /** Events fanned out at once by each replica. @default 512 */
  routerConcurrency?: number;
  /** Webhooks one organization may have. @default 1000 */
  maxWebhooks?: number;
  /** The verification key set's rate limit per organization and replica. @default { perMinute: 30, burst: 60 } */
  jwksRateLimit?: { perMinute?: number; burst?: number };
  /**
   * The rate limit of resends per organization and replica: each `.../deliveries/{id}/resend` and each
   * `.../recover` call takes one token (a recover resends at most 1000 deliveries). Past it: 429 with
   * Retry-After. @default { perMinute: 60, burst: 20 }
   */
  resendRateLimit?: { perMinute?: number; burst?: number };
  /** Cache-Control max-age of the verification key set, in seconds. @default 300 */
  jwksMaxAgeSeconds?: number;
  /**
   * The longest the token_minted hook may hold a sign-in, every attempt of every webhook included (each
   * attempt's timeout shrinks to fit); past it the token is blocked. @default 10000
   */
  tokenMintedDeadlineMs?: number;
  /** Days deliveries, their attempts and stored events are kept; 0 keeps them for ever. @default 30 */
  retentionDays?: number;
}

// A message's lease must outlast its handler: the longest webhook timeout (20 s), the signature and the
// record. Leases are counted on the service's clock, and the work is real time, hence the rate.
const DELIVERY_LEASE_REAL_MS = 30_000;
const ROUTER_LEASE_REAL_MS = 15_000;
const DEFAULT_ROUTER_CONCURRENCY = 512;
const DEFAULT_DELIVERY_CONCURRENCY = 256;

/**
 * Webhooks: their operations and triggers, the verification key set, test events, and durable signed
 * delivery of events through the EventBus (router, then one delivery per webhook, retried for 30 min).
 *
 * @example
 * export default defineService({ plugins: [webhooks({ deliveryConcurrency: 512 })] });
 */
export const webhooks = (options: WebhooksOptions = {}) =>
  definePlugin({
    id: 'webhooks',
    migrations,
    settings: webhooksSettings.schema,
    setup(ctx) {
      const log = ctx.log.child({ component: 'webhooks' });
      const store = createWebhookStore({
        storage: ctx.storage,
        secrets: ctx.secrets,
        clock: ctx.clock,
        maxWebhooks: options.maxWebhooks ?? 1000,
      });
      const operator = createOperatorStore({ storage: ctx.storage, bus: ctx.bus, clock: ctx.clock });
      const buckets = createTokenBuckets({
        name: 'webhooks-jwks',
        clock: ctx.clock,
        storage: ctx.storage,
        capacity: options.jwksRateLimit?.burst ?? 60,
        perMinute: options.jwksRateLimit?.perMinute ?? 30,
      });
      // TEST_EVENTS_RATE_LIMIT (drills and load tests raise it without a code change), else the
      // option of service.config.ts, else the reference's.
      const testEvents = webhooksSettings.resolve(ctx.settings, options).TEST_EVENTS_RATE_LIMIT;
      const testEventBuckets = createTokenBuckets({
        name: 'webhooks-test-events',
        clock: ctx.clock,
        storage: ctx.storage,
        capacity: testEvents.burst,
        perMinute: testEvents.perMinute,
      });
      const resends = {
        perMinute: options.resendRateLimit?.perMinute ?? RESEND_RATE_LIMIT.perMinute,
        burst: options.resendRateLimit?.burst ?? RESEND_RATE_LIMIT.burst,
      };
      const resendBuckets = createTokenBuckets({
        name: 'webhooks-resend',
        clock: ctx.clock,
        storage: ctx.storage,
        capacity: resends.burst,
        perMinute: resends.perMinute,
      });
      const recorder = createAttemptRecorder(ctx.storage);
      const metrics = webhookMetrics(ctx.metrics);
      const events = createEventCache();
      const fresh = createFreshDeliveries();
      const router = createRouter({
        storage: ctx.storage,
        bus: ctx.bus,
        clock: ctx.clock,
        log,
        events,
        fresh,
      });
      const deliver = createDeliveryHandler({
        storage: ctx.storage,
        signer: ctx.signer,
        secrets: ctx.secrets,
        delivery: ctx.delivery,
        clock: ctx.clock,
        log,
        recorder,
        issuer: ctx.config.publicBaseUrl,
        events,
        fresh,
        metrics,
      });
      const openHeaders = createHeaderOpener(ctx.secrets);
      const hookLog = createHookLog({
        storage: ctx.storage,
        clock: ctx.clock,
        onError: (err) => log.error('recording a sync_hook call failed', { error: String(err) }),
      });
      const tokenMinted = createTokenMintedHook({
        signer: ctx.signer,
        delivery: ctx.delivery,
        clock: ctx.clock,
        issuer: ctx.config.publicBaseUrl,
        openHeaders,
        targets: createHookTargets(ctx.storage, TOKEN_MINTED),
        log: hookLog,
        logger: log,
        deadlineMs: options.tokenMintedDeadlineMs ?? DEFAULT_TOKEN_MINTED_DEADLINE_MS,
        metrics,
      });
      const subscriptions: Subscription[] = [];
      const worker: Worker = {
        name: 'webhooks',
        start() {
          subscriptions.push(
            ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, (m) => router.handle(m), {
              concurrency: options.routerConcurrency ?? DEFAULT_ROUTER_CONCURRENCY,
              leaseMs: ROUTER_LEASE_REAL_MS * ctx.clock.rate,
            }),
            ctx.bus.consume<DeliveryMessage>(DELIVERIES_TOPIC, deliver, {
              concurrency: options.deliveryConcurrency ?? DEFAULT_DELIVERY_CONCURRENCY,
              leaseMs: DELIVERY_LEASE_REAL_MS * ctx.clock.rate,
            }),
          );
        },
        async stop() {
          // Handlers in flight finish (their records commit) before the bus closes.
          await Promise.all(subscriptions.splice(0).map((s) => s.stop()));
          await Promise.all([recorder.flush(), hookLog.flush()]);
        },
      };
      const days = options.retentionDays ?? 30;
      const workers = [worker];
      if (days > 0) workers.push(retentionWorker({ storage: ctx.storage, clock: ctx.clock, log, days }));
      return {
        routes: new Elysia()
          .use(jwksRoutes(ctx, buckets, options.jwksMaxAgeSeconds ?? 300))
          .use(webhookRoutes(ctx, store, openHeaders))
          .use(triggerRoutes(ctx, store))
          .use(operatorRoutes(ctx, store, operator, { buckets: resendBuckets, ...resends }))
          .use(testEventRoutes(ctx, { buckets: testEventBuckets, ...testEvents })),
        workers,
        // Never for mint-token: it sets its own custom claims (the spec's hook is for sign-ins).
        attach: [beforeTokenIssued.attach({ match: (draft) => draft.issuer !== 'mint', run: tokenMinted })],
        sealed: [customHeadersSealed],
      };
    },
  });
