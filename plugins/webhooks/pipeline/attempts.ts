import { type Batching, batchingFor, createGroupCommit } from '../../../core/batching/group-commit.ts';
import { prepared } from '../../../core/db/prepared.ts';
import type { Storage } from '../../../core/ports/storage.ts';

/** What followed an attempt. */
export type AttemptOutcome = 'succeeded' | 'retry' | 'dropped';

/** One attempt (or, with `attempt: null`, a delivery settled without one: its webhook was deleted). */
export interface AttemptRecord {
  deliveryId: string;
  webhookId: string;
  /** The new status of the delivery. */
  status: 'retrying' | 'succeeded' | 'dropped';
  firstAttemptAt: number | null;
  nextAttemptAt: number | null;
  settledAt: number | null;
  lastError: string | null;
  attempt: {
    n: number;
    jti: string;
    startedAt: number;
    latencyMs: number;
    ok: boolean;
    statusCode: number | null;
    errorKind: string | null;
    error: string | null;
    response: string | null;
    outcome: AttemptOutcome;
    retryAt: number | null;
  } | null;
}

/** Characters of the response body kept with an attempt. */
export const RESPONSE_EXCERPT_CHARS = 512;

// Postgres text (and jsonb) cannot hold NUL; a receiver's answer may.
const clean = (s: string | null, max = 2000) =>
  s === null ? null : s.replaceAll('\u0000', '\uFFFD').slice(0, max);

// One statement (atomic on its own, no BEGIN and COMMIT): the attempts go in, and the deliveries move
// on. A settled delivery stays settled: a late record (a duplicate attempt after a lease ran out) cannot
// turn a success back into a retry. The id list lets the planner use the primary key whatever it
// guesses of the recordset (PGlite keeps no statistics).
const recordAttempts = prepared(
  null,
  `with r as (
    select * from jsonb_to_recordset($1::jsonb) as r(delivery_id uuid, webhook_id uuid,
      status text, first_attempt_at bigint, next_attempt_at bigint, settled_at bigint,
      last_error text, attempted boolean, n int, jti uuid, started_at bigint, latency_ms real,
      ok boolean, status_code int, error_kind text, error text, response text, outcome text,
      retry_at bigint)
  ),
  attempts as (
    insert into webhook_attempts (delivery_id, webhook_id, attempt, jti, started_at, latency_ms, ok,
      status_code, error_kind, error, response, outcome, retry_at)
    select delivery_id, webhook_id, n, jti, started_at, latency_ms, ok, status_code, error_kind, error,
      response, outcome, retry_at
    from r where attempted
  )
  update webhook_deliveries d set
    status = r.status,
    attempts = greatest(d.attempts, r.n),
    first_attempt_at = coalesce(d.first_attempt_at, r.first_attempt_at),
    last_attempt_at = coalesce(r.started_at, d.last_attempt_at),
    next_attempt_at = r.next_attempt_at,
    settled_at = r.settled_at,
    last_status_code = coalesce(r.status_code, case when r.attempted then null else d.last_status_code end),
    last_error = r.last_error
  from r
  where d.id = r.delivery_id and d.status in ('pending', 'retrying') and d.id = any($2::uuid[])`,
);

/**
 * Records attempts with group commit: the handlers of many deliveries wait on one statement that
 * inserts all their attempt rows and updates all their deliveries, so the delivery hot path is not
 * bounded by one commit per attempt. A handler returns its outcome to the bus only after its record
 * has committed: a crash before that leaves the message unsettled, and it is attempted again.
 */
export function createAttemptRecorder(storage: Storage, batching: Batching = batchingFor(storage)) {
  const commit = createGroupCommit<AttemptRecord>({
    storage,
    transaction: false,
    lingerMs: batching.lingerMs,
    concurrency: batching.concurrency,
    async write(tx, records) {
      const rows = records.map((r) => ({
        delivery_id: r.deliveryId,
        webhook_id: r.webhookId,
        status: r.status,
        first_attempt_at: r.firstAttemptAt,
        next_attempt_at: r.nextAttemptAt,
        settled_at: r.settledAt,
        last_error: clean(r.lastError),
        attempted: r.attempt !== null,
        n: r.attempt?.n ?? 0,
        jti: r.attempt?.jti ?? null,
        started_at: r.attempt?.startedAt ?? null,
        latency_ms: r.attempt?.latencyMs ?? null,
        ok: r.attempt?.ok ?? null,
        status_code: r.attempt?.statusCode ?? null,
        error_kind: r.attempt?.errorKind ?? null,
        error: clean(r.attempt?.error ?? null),
        response: clean(r.attempt?.response ?? null, RESPONSE_EXCERPT_CHARS),
        outcome: r.attempt?.outcome ?? null,
        retry_at: r.attempt?.retryAt ?? null,
      }));
      const ids = `{${[...new Set(records.map((r) => r.deliveryId))].join(',')}}`;
      await recordAttempts(tx.db, JSON.stringify(rows), ids);
      return records.map(() => undefined);
    },
  });
  return {
    /** Resolves once the record has committed. */
    record: (r: AttemptRecord) => commit.add(r),
    flush: () => commit.flush(),
  };
}

export type AttemptRecorder = ReturnType<typeof createAttemptRecorder>;
