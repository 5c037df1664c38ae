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
// turn a success back into a retry. The deliveries are found by the id list (the primary key, whatever
// the planner guesses; PGlite keeps no statistics), and each finds its record by key in one object
// made of the batch, not by a join: the planner expects almost no delivery to be pending, so a join
// with the recordset ran as a nested loop that read the whole batch once per delivery (20 ms for a
// batch of 127). Of two records of one delivery in a batch, the later moves it on; both are logged.
const recordAttempts = prepared(
  null,
  `with r as (
    select * from jsonb_to_recordset($1::jsonb) as r(delivery_id uuid, webhook_id uuid,
      n int, jti uuid, started_at bigint, latency_ms real, ok boolean, status_code int,
      error_kind text, error text, response text, outcome text, retry_at bigint, attempted boolean)
  ),
  attempts as (
    insert into webhook_attempts (delivery_id, webhook_id, attempt, jti, started_at, latency_ms, ok,
      status_code, error_kind, error, response, outcome, retry_at)
    select delivery_id, webhook_id, n, jti, started_at, latency_ms, ok, status_code, error_kind, error,
      response, outcome, retry_at
    from r where attempted
  ),
  batch as materialized (
    select jsonb_object_agg((e->>'delivery_id')::uuid::text, e order by i) as records
    from jsonb_array_elements($1::jsonb) with ordinality as t(e, i)
  )
  update webhook_deliveries d set
    (status, attempts, first_attempt_at, last_attempt_at, next_attempt_at, settled_at, last_status_code,
     last_error) =
    (select u.status, greatest(d.attempts, u.n), coalesce(d.first_attempt_at, u.first_attempt_at),
       coalesce(u.started_at, d.last_attempt_at), u.next_attempt_at, u.settled_at,
       coalesce(u.status_code, case when u.attempted then null else d.last_status_code end), u.last_error
     from jsonb_to_record(batch.records -> d.id::text) as u(status text, n int, first_attempt_at bigint,
       started_at bigint, next_attempt_at bigint, settled_at bigint, status_code int, attempted boolean,
       last_error text))
  from batch
  where d.id = any($2::uuid[]) and d.status in ('pending', 'retrying') and batch.records ? d.id::text`,
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
