import { isUuid, uuidv7 } from '../../../core/ids.ts';
import type { Logger } from '../../../core/log.ts';
import type { JsonValue } from '../../../core/ports/event-bus.ts';
import type { TokenDraft, TokenHookResult } from '../../../core/tokens/before-token-issued.ts';
import { REGISTERED_CLAIMS } from '../../../core/tokens/reserved-claims.ts';
import { WebhookErrors } from '../errors.ts';
import type { createHookTargets } from '../store/hook-targets.ts';
import type { HookLog, SyncVerdict } from './hook-log.ts';
import type { WebhookMetrics } from './metrics.ts';
import { callSyncHook, type SyncCall, type SyncCallDeps } from './sync-call.ts';

export const TOKEN_MINTED = 'token_minted';
/** The longest a token_minted run may take, all attempts of all webhooks included. @default 10 s */
export const DEFAULT_TOKEN_MINTED_DEADLINE_MS = 10_000;

export interface TokenMintedDeps extends SyncCallDeps {
  targets: ReturnType<typeof createHookTargets>;
  log: HookLog;
  logger: Logger;
  /** Overall deadline of one run, in real milliseconds. */
  deadlineMs: number;
  /** Where runs (latency, passed or blocked) and failed calls are counted. */
  metrics: WebhookMetrics;
}

type Claims = Record<string, JsonValue>;

/** What a call came to: its claims, or why it blocks the token. */
function judge(
  call: SyncCall,
  refusesClaim: TokenDraft['refusesClaim'],
): { verdict: SyncVerdict; claims?: Claims } {
  const { last, attempts } = call;
  if (!last.ok) {
    const why =
      last.status !== undefined
        ? `it answered ${last.status}`
        : `${last.errorKind ?? 'network'}: ${last.error ?? 'no answer'}`;
    return {
      verdict: {
        ok: false,
        kind: last.errorKind ?? 'http_status',
        reason: `failed after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'} (${why})`,
      },
    };
  }
  const text = last.body.trim();
  if (text === '') return { verdict: { ok: true } };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      verdict: { ok: false, kind: 'invalid_response', reason: 'it answered a body that is not JSON' },
    };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    const what = body === null ? 'null' : Array.isArray(body) ? 'an array' : `a ${typeof body}`;
    return {
      verdict: { ok: false, kind: 'invalid_response', reason: `it answered ${what}, not a JSON object` },
    };
  }
  const claims = body as Claims;
  // The issuer's own rule: a claim it would refuse blocks here, logged and counted as this call's.
  const refused = Object.keys(claims).find(refusesClaim);
  if (refused !== undefined)
    return {
      verdict: {
        ok: false,
        kind: 'reserved_claim',
        reason: `it tried to set the ${REGISTERED_CLAIMS.has(refused) ? 'registered' : 'reserved'} claim ${JSON.stringify(refused)}`,
      },
    };
  return { verdict: { ok: true }, claims };
}

/**
 * The token_minted synchronous hook, attached to beforeTokenIssued: calls every webhook of the
 * draft's organization with a sync_hook token_minted trigger, all at once, and merges their claims in
 * webhook creation order (a later webhook wins on the same claim). Throws TOKEN_MINTED_BLOCKED (403),
 * naming the first blocking webhook in that order, when any call still fails after its attempts,
 * answers a 2xx that is not a JSON object, or sets a registered or reserved claim. Every call goes to
 * the webhook's delivery log without delaying the answer.
 */
export function createTokenMintedHook(deps: TokenMintedDeps) {
  return async function run(draft: TokenDraft): Promise<TokenHookResult | undefined> {
    if (!isUuid(draft.orgId)) return undefined;
    const targets = await deps.targets.of(draft.orgId);
    if (targets.length === 0) return undefined;
    const started = performance.now();
    const deadline = started + deps.deadlineMs;
    const content = draft.content as unknown as Claims;
    const calls = await Promise.all(
      targets.map((target) =>
        callSyncHook(deps, {
          orgId: draft.orgId,
          target,
          instanceId: uuidv7(deps.clock.now()),
          triggerName: TOKEN_MINTED,
          content,
          deadline,
        }),
      ),
    );
    const claims: Claims = {};
    let blocked: { webhookId: string; reason: string } | undefined;
    for (const call of calls) {
      const { verdict, claims: added } = judge(call, draft.refusesClaim);
      deps.log.record(call, draft.orgId, TOKEN_MINTED, verdict);
      if (!verdict.ok) {
        deps.metrics.tokenMintedFailure(verdict.kind);
        blocked ??= { webhookId: call.target.id, reason: verdict.reason };
      }
      // Defined, not assigned: a member named __proto__ stays a claim, never the object's prototype.
      else if (added)
        for (const [k, v] of Object.entries(added))
          Object.defineProperty(claims, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
    }
    deps.metrics.tokenMinted(blocked !== undefined, (performance.now() - started) / 1000);
    if (blocked) {
      deps.logger.info('token_minted hook blocked a token', {
        org_id: draft.orgId,
        webhook_id: blocked.webhookId,
        reason: blocked.reason,
      });
      throw WebhookErrors.TOKEN_MINTED_BLOCKED(blocked.webhookId, blocked.reason);
    }
    return Object.keys(claims).length > 0 ? { claims } : undefined;
  };
}
