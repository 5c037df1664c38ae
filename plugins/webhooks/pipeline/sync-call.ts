import type { Clock } from '../../../core/ports/clock.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { DeliveryResult, HttpDelivery } from '../../../core/ports/http-delivery.ts';
import type { Signer } from '../../../core/ports/signer.ts';
import type { CustomHeaders } from '../store/custom-headers.ts';
import type { HookTarget } from '../store/hook-targets.ts';
import { JWT_LIFETIME_S } from './delivery.ts';

/** Timeout of one synchronous hook attempt when the webhook sets none (spec, Limits). */
export const DEFAULT_SYNC_HOOK_TIMEOUT_MS = 2000;
/** Attempts of one synchronous hook call at most, and the wait between them (spec, Limits). */
export const SYNC_HOOK_ATTEMPTS = 3;
export const SYNC_HOOK_RETRY_DELAY_MS = 100;
/** Bytes of a hook's answer read at most: its claims. */
export const MAX_HOOK_RESPONSE_BYTES = 64 * 1024;

/** One attempt as the delivery log keeps it. */
export interface SyncAttempt {
  n: number;
  jti: string;
  /** On the service's clock. */
  startedAt: number;
  result: DeliveryResult;
}

/** What one webhook's call came to: its attempts, and the last one's result. */
export interface SyncCall {
  target: HookTarget;
  /** The hook instance: the JWT's `sub`, the delivery's event_id. */
  instanceId: string;
  attempts: SyncAttempt[];
  last: DeliveryResult;
}

export interface SyncCallDeps {
  signer: Signer;
  delivery: HttpDelivery;
  clock: Clock;
  /** The `iss` of the JWT: the deployment's PUBLIC_BASE_URL. */
  issuer: string;
  openHeaders(webhookId: string, sealed: string | null): Promise<CustomHeaders | undefined>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls one webhook for a synchronous hook, signed as event deliveries are (a fresh `jti` and `iat`
 * each attempt, `sub` the hook instance). A non-2xx answer or a failure (timeout, refused address...) is
 * tried again after 100 ms, three attempts at most, and never past `deadline` (a real-time instant,
 * `performance.now()`): the last attempt's timeout shrinks to fit, and none starts once it has passed.
 */
export async function callSyncHook(
  deps: SyncCallDeps,
  call: {
    orgId: string;
    target: HookTarget;
    instanceId: string;
    triggerName: string;
    content: Record<string, JsonValue>;
    deadline: number;
  },
): Promise<SyncCall> {
  const { target } = call;
  const timeoutMs = target.timeoutNs ? Math.ceil(target.timeoutNs / 1e6) : DEFAULT_SYNC_HOOK_TIMEOUT_MS;
  const custom = await deps.openHeaders(target.id, target.customHeaders);
  const headers = { ...custom, 'content-type': 'application/jwt' };
  const attempts: SyncAttempt[] = [];
  let last: DeliveryResult = {
    ok: false,
    errorKind: 'timeout',
    error: 'the deadline passed',
    latencyMs: 0,
    body: '',
  };
  for (let n = 1; n <= SYNC_HOOK_ATTEMPTS; n++) {
    if (n > 1) await sleep(SYNC_HOOK_RETRY_DELAY_MS);
    const left = call.deadline - performance.now();
    if (left < 1) break;
    const startedAt = deps.clock.now();
    const jti = crypto.randomUUID();
    const iat = Math.floor(startedAt / 1000);
    const jwt = await deps.signer.sign(call.orgId, {
      jti,
      aud: call.orgId,
      sub: call.instanceId,
      iss: deps.issuer,
      iat,
      exp: iat + JWT_LIFETIME_S,
      webhook_id: target.id,
      target_url: target.targetUrl,
      trigger_type: 'sync_hook',
      trigger_name: call.triggerName,
      trigger_content: call.content,
    });
    last = await deps.delivery.post({
      url: target.targetUrl,
      headers,
      body: jwt,
      timeoutMs: Math.max(1, Math.min(timeoutMs, Math.floor(left))),
      maxResponseBytes: MAX_HOOK_RESPONSE_BYTES,
    });
    attempts.push({ n, jti, startedAt, result: last });
    if (last.ok) break;
  }
  return { target, instanceId: call.instanceId, attempts, last };
}
