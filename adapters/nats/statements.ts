import { prepared } from '../../core/db/prepared.ts';
import type { JsonValue } from '../../core/ports/event-bus.ts';
import type { Database } from '../../core/ports/storage.ts';

/**
 * The outbox's hot statements: fixed texts with the rows as one JSON (or array) parameter, prepared once
 * per connection, instead of a drizzle insert of one parameter per value (a new text, and a parse and
 * plan, for every batch size).
 */
export interface OutboxRow {
  seq: number | string;
  topic: string;
  msg_id: string;
  payload: JsonValue;
  /** Attempts a consumer made of it before it came back to the outbox. */
  attempts: number;
}

const insert = prepared<{ seq: number | string; msg_id: string; due_ms: number | string }>(
  'outbox_insert_due',
  `insert into bus_outbox (topic, msg_id, payload, due_at, attempts)
  select r.topic, r.msg_id, r.payload, now() + r.hold_ms * interval '1 millisecond', r.attempts
  from jsonb_to_recordset($1::jsonb) as r(topic text, msg_id text, payload jsonb, hold_ms int, attempts int)
  returning seq, msg_id, floor(extract(epoch from due_at) * 1000)::float8 as due_ms`,
);

/**
 * Writes messages to the outbox (inside the caller's transaction) and answers each row's seq, id and
 * when it falls due (epoch milliseconds on the database's clock). `hold_ms` is how long the relay
 * leaves the row to the committing process (from the transaction's start): a moment to publish it,
 * or long enough for a consumer here to handle it. `attempts`: what the relay tells consumers were made
 * already, should it ever move the row (1 for a row a consumer here may take: it may die handling it).
 */
export const insertOutbox = (
  db: Database,
  rows: ReadonlyArray<{
    topic: string;
    msg_id: string;
    payload: JsonValue;
    hold_ms: number;
    attempts: number;
  }>,
) => insert(db, JSON.stringify(rows));

const claim = prepared<OutboxRow>(
  'outbox_claim_due',
  `select seq, topic, msg_id, payload, attempts from bus_outbox
  where due_at < now()
  order by due_at, seq limit $1::int for update skip locked`,
);

/** Locks the rows longest due that no other relay holds, until the transaction ends. */
export const claimOutbox = (db: Database, limit: number) => claim(db, limit);

const postpone = prepared(
  'outbox_postpone',
  `update bus_outbox set due_at = now() + $2::int * interval '1 millisecond' where seq = $1::bigint`,
);

/**
 * Leaves a row handled once to the relay, which moves it to JetStream once `delayMs` have passed (its
 * `attempts` already counts that handling).
 */
export const postponeOutbox = (db: Database, seq: number | string, delayMs: number) =>
  postpone(db, seq, Math.min(2_147_483_647, Math.max(0, Math.round(delayMs))));

const remove = prepared('outbox_delete', `delete from bus_outbox where seq = any($1::bigint[])`);

/** Deletes moved rows: an array is looked up in the primary key. */
export const deleteOutbox = (db: Database, seqs: ReadonlyArray<number | string>) =>
  remove(db, `{${seqs.join(',')}}`);

const stats = prepared<{ topic: string; depth: string | number; oldest: string | Date | null }>(
  'outbox_topic_stats',
  `select topic, count(*) as depth, min(created_at) as oldest from bus_outbox group by topic`,
);

/** Each topic's rows committed and not yet relayed to JetStream, and when the oldest was written. */
export const outboxStats = async (db: Database) =>
  new Map(
    (await stats(db)).map((r) => [
      r.topic,
      { depth: Number(r.depth), oldest: r.oldest == null ? null : new Date(r.oldest).getTime() },
    ]),
  );
