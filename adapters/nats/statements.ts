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
}

const insert = prepared<{ seq: number | string; msg_id: string }>(
  'outbox_insert_returning',
  `insert into bus_outbox (topic, msg_id, payload)
  select r.topic, r.msg_id, r.payload
  from jsonb_to_recordset($1::jsonb) as r(topic text, msg_id text, payload jsonb)
  returning seq, msg_id`,
);

/** Writes messages to the outbox (inside the caller's transaction) and answers each row's seq and id. */
export const insertOutbox = (
  db: Database,
  rows: ReadonlyArray<{ topic: string; msg_id: string; payload: JsonValue }>,
) => insert(db, JSON.stringify(rows));

const claim = prepared<OutboxRow>(
  'outbox_claim_aged',
  `select seq, topic, msg_id, payload from bus_outbox
  where created_at < now() - $2::int * interval '1 millisecond'
  order by seq limit $1::int for update skip locked`,
);

/**
 * Locks the oldest rows no other relay holds, until the transaction ends: rows written at least
 * `minAgeMs` ago (by their transaction's start), younger ones being the committing process's to move.
 */
export const claimOutbox = (db: Database, limit: number, minAgeMs: number) => claim(db, limit, minAgeMs);

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
