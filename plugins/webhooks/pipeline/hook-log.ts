import { type Batching, batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import { uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { RESPONSE_EXCERPT_CHARS } from './attempts.ts';
import { failureOf } from './delivery.ts';
import type { SyncCall } from './sync-call.ts';

/** How a synchronous hook call ended: accepted, or the reason it blocked (with the error kind). */
export type SyncVerdict = { ok: true } | { ok: false; kind: string; reason: string };

interface HookRecord {
  call: SyncCall;
  orgId: string;
  triggerName: string;
  verdict: SyncVerdict;
  settledAt: number;
}

// Postgres text cannot hold NUL; a receiver's answer may.
const clean = (s: string | null | undefined, max = 2000) =>
  s == null ? null : s.replaceAll('\u0000', '\uFFFD').slice(0, max);

// One statement, atomic on its own: the deliveries (settled at once) and all their attempts.
const insertCalls = prepared(
  null,
  `with a as (
    insert into webhook_attempts (delivery_id, webhook_id, attempt, jti, started_at, latency_ms, ok,
      status_code, error_kind, error, response, outcome)
    select delivery_id, webhook_id, n, jti, started_at, latency_ms, ok, status_code, error_kind, error,
      response, outcome
    from jsonb_to_recordset($2::jsonb) as r(delivery_id uuid, webhook_id uuid, n int, jti uuid,
      started_at bigint, latency_ms real, ok boolean, status_code int, error_kind text, error text,
      response text, outcome text)
  )
  insert into webhook_deliveries (id, org_id, webhook_id, event_id, source, trigger_type, trigger_name,
    status, attempts, created_at, first_attempt_at, last_attempt_at, settled_at, last_status_code, last_error)
  select id, org_id, webhook_id, event_id, 'hook:' || event_id, 'sync_hook', trigger_name, status, attempts,
    created_at, first_attempt_at, last_attempt_at, settled_at, last_status_code, last_error
  from jsonb_to_recordset($1::jsonb) as d(id uuid, org_id uuid, webhook_id uuid, event_id uuid,
    trigger_name text, status text, attempts int, created_at bigint, first_attempt_at bigint,
    last_attempt_at bigint, settled_at bigint, last_status_code int, last_error text)
  on conflict do nothing`,
);

function rowsOf(r: HookRecord) {
  const { call, verdict } = r;
  const id = uuidv7(call.attempts[0]?.startedAt ?? r.settledAt);
  const attempts = call.attempts.map((a, i) => {
    const final = i === call.attempts.length - 1;
    const failure = a.result.ok ? undefined : failureOf(a.result);
    // A 2xx whose body blocked (not an object, a reserved claim) is the final attempt's failure.
    const blocked = final && !verdict.ok && a.result.ok ? verdict : undefined;
    return {
      delivery_id: id,
      webhook_id: call.target.id,
      n: a.n,
      jti: a.jti,
      started_at: a.startedAt,
      latency_ms: Math.round(a.result.latencyMs * 100) / 100,
      ok: a.result.ok,
      status_code: a.result.status ?? null,
      error_kind: blocked?.kind ?? failure?.kind ?? null,
      error: clean(blocked?.reason ?? failure?.message),
      response: clean(a.result.body || null, RESPONSE_EXCERPT_CHARS),
      outcome: !final ? 'retry' : verdict.ok ? 'succeeded' : 'dropped',
    };
  });
  const delivery = {
    id,
    org_id: r.orgId,
    webhook_id: call.target.id,
    event_id: call.instanceId,
    trigger_name: r.triggerName,
    status: verdict.ok ? 'succeeded' : 'dropped',
    attempts: call.attempts.length,
    created_at: call.attempts[0]?.startedAt ?? r.settledAt,
    first_attempt_at: call.attempts[0]?.startedAt ?? null,
    last_attempt_at: call.attempts.at(-1)?.startedAt ?? null,
    settled_at: r.settledAt,
    last_status_code: call.last.status ?? null,
    last_error: verdict.ok ? null : clean(verdict.reason),
  };
  return { delivery, attempts };
}

/**
 * The delivery log of synchronous hook calls: each call becomes a settled delivery (`sync_hook`,
 * succeeded or dropped) with its attempts, shown by GET .../deliveries like event deliveries. Records
 * go in with group commit and nobody waits for them: the sign-in answers as soon as the hooks have.
 */
export function createHookLog(
  deps: { storage: Storage; clock: Clock; onError(err: unknown): void },
  batching: Batching = batchingFor(deps.storage),
) {
  const commit = createGroupCommit<HookRecord>({
    storage: deps.storage,
    transaction: false,
    lingerMs: batching.lingerMs,
    concurrency: batching.concurrency,
    async write(tx, records) {
      const rows = records.map(rowsOf);
      await insertCalls(
        tx.db,
        JSON.stringify(rows.map((r) => r.delivery)),
        JSON.stringify(rows.flatMap((r) => r.attempts)),
      );
      return records.map(() => undefined);
    },
  });
  return {
    /** Queues the record of a call; returns at once. */
    record(call: SyncCall, orgId: string, triggerName: string, verdict: SyncVerdict): void {
      const record = { call, orgId, triggerName, verdict, settledAt: deps.clock.now() };
      commit.add(record).catch(deps.onError);
    },
    /** Resolves once every queued record has committed (shutdown, tests). */
    flush: () => commit.flush(),
  };
}

export type HookLog = ReturnType<typeof createHookLog>;
