import { expect } from 'bun:test';
import { sql } from 'drizzle-orm';
import { uuidv7 } from '../../../core/ids.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { type AttemptRecord, createAttemptRecorder } from '../../../plugins/webhooks/pipeline/attempts.ts';

/**
 * One batch of 301 records on a migrated storage (PGlite here, Postgres in test/integration): each
 * delivery moves on, a settled one stays settled, a delivery recorded twice keeps both attempts and the
 * later record, and an id in capitals finds its delivery.
 */
export async function recordsABatchWhole(storage: Storage): Promise<void> {
  const at = Date.now();
  const webhookId = crypto.randomUUID();
  const ids = Array.from({ length: 300 }, () => uuidv7(at));
  const event = crypto.randomUUID();
  await storage.query(sql`insert into webhook_events (event_id, org_id, event_name, content, created_at)
    values (${event}, ${crypto.randomUUID()}, 'RoleCreated_v1', '{}', ${at})`);
  for (const [i, id] of ids.entries())
    await storage.query(sql`insert into webhook_deliveries (id, org_id, webhook_id, event_id, source,
      trigger_type, trigger_name, status, attempts, created_at) values (${id}, ${crypto.randomUUID()},
      ${webhookId}, ${event}, ${id}, 'event', 'RoleCreated_v1', ${i === 0 ? 'succeeded' : 'pending'},
      ${i === 0 ? 1 : 0}, ${at})`);
  // Large batches: everything recorded below goes out in one or two statements.
  const recorder = createAttemptRecorder(storage, { lingerMs: 5, concurrency: 1 });
  const attempt = (n: number, ok: boolean, statusCode: number) => ({
    n,
    jti: crypto.randomUUID(),
    startedAt: at + n,
    latencyMs: 1.5,
    ok,
    statusCode,
    errorKind: ok ? null : 'http_status',
    error: ok ? null : `answered ${statusCode}`,
    response: 'x',
    outcome: ok ? ('succeeded' as const) : ('retry' as const),
    retryAt: ok ? null : at + 60_000,
  });
  // ids[4] twice in one batch: a failed attempt, then one that succeeded. Both are logged.
  const again: AttemptRecord = {
    deliveryId: ids[4]!,
    webhookId,
    status: 'succeeded',
    firstAttemptAt: at,
    nextAttemptAt: null,
    settledAt: at + 20,
    lastError: null,
    attempt: attempt(2, true, 202),
  };
  await Promise.all(
    [...ids, ids[4]!].map((deliveryId, i) =>
      i === ids.length
        ? recorder.record(again)
        : recorder.record(
            i === 299
              ? // Settled without an attempt: its webhook was deleted.
                {
                  deliveryId,
                  webhookId,
                  status: 'dropped',
                  firstAttemptAt: null,
                  nextAttemptAt: null,
                  settledAt: at,
                  lastError: 'the webhook was deleted',
                  attempt: null,
                }
              : i % 2 === 0
                ? {
                    // One id as a caller might spell it: the record still finds its delivery.
                    deliveryId: i === 2 ? deliveryId.toUpperCase() : deliveryId,
                    webhookId,
                    status: 'retrying',
                    firstAttemptAt: at,
                    nextAttemptAt: at + 60_000,
                    settledAt: null,
                    lastError: 'answered 500',
                    attempt: attempt(i === 0 ? 2 : 1, false, 500),
                  }
                : {
                    deliveryId,
                    webhookId,
                    status: 'succeeded',
                    firstAttemptAt: at,
                    nextAttemptAt: null,
                    settledAt: at + 10,
                    lastError: null,
                    attempt: attempt(1, true, 204),
                  },
          ),
    ),
  );
  const rows = await storage.query<{
    id: string;
    status: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    next_attempt_at: string | null;
  }>(sql`select id, status, attempts, last_status_code, last_error, next_attempt_at from webhook_deliveries
    where webhook_id = ${webhookId}`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  // The late retry of a delivery that had succeeded leaves it as it was.
  expect(byId.get(ids[0]!)).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: null });
  expect(byId.get(ids[2]!)).toMatchObject({ status: 'retrying', attempts: 1, last_status_code: 500 });
  expect(Number(byId.get(ids[2]!)!.next_attempt_at)).toBe(at + 60_000);
  expect(byId.get(ids[1]!)).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 204 });
  expect(byId.get(ids[299]!)).toMatchObject({
    status: 'dropped',
    attempts: 0,
    last_error: 'the webhook was deleted',
  });
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
  expect(byId.get(ids[4]!)).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 202 });
  expect(Object.fromEntries(counts)).toEqual({ succeeded: 151, retrying: 148, dropped: 1 });
  const [{ n } = { n: 0 }] = await storage.query<{ n: number }>(
    sql`select count(*)::int as n from webhook_attempts where webhook_id = ${webhookId}`,
  );
  expect(n).toBe(300);
}
