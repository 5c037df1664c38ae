import { prepared } from '../../core/db/prepared.ts';
import type { Database } from '../../core/ports/storage.ts';

/**
 * The queue's hot statements. Each has one fixed text whatever the batch size (the rows travel as one
 * JSON parameter) and is prepared once per connection (see `prepared`).
 */
export interface QueueRow {
  topic: string;
  msg_id: string;
  payload: unknown;
  available_at: number;
  published_at: number;
}

export interface ClaimedRow {
  seq: number | string;
  msg_id: string;
  payload: unknown;
  attempts: number;
}

const insert = prepared(
  'bus_insert_messages',
  `with ins as (
    insert into bus_messages (topic, msg_id, payload, available_at, published_at)
    select r.topic, r.msg_id, r.payload, r.available_at, r.published_at
    from jsonb_to_recordset($1::jsonb)
      as r(topic text, msg_id text, payload jsonb, available_at bigint, published_at bigint)
    on conflict do nothing
    returning topic
  )
  select pg_notify('bus_' || replace(t.topic, '-', '_'), '') from (select distinct topic from ins) t`,
);

/** Inserts rows (a repeated id of a topic is ignored) and notifies each topic's listeners at commit. */
export const insertMessages = (db: Database, rows: readonly QueueRow[]) => insert(db, JSON.stringify(rows));

/**
 * A Postgres array literal of message seqs. An array (`seq = any(...)`) is looked up in the primary key;
 * a set of rows (`seq in (select ...)`, a join with a recordset) was planned as a hash join over the
 * whole table, which with a backlog of waiting messages (retries, a slow consumer) costs a scan of the
 * queue per statement.
 */
const seqArray = (seqs: readonly number[]) => `{${seqs.join(',')}}`;

const remove = prepared('bus_delete_messages', `delete from bus_messages where seq = any($1::bigint[])`);

/** Deletes acknowledged (or dropped) messages. */
export const deleteMessages = (db: Database, seqs: readonly number[]) => remove(db, seqArray(seqs));

const reschedule = prepared(
  'bus_reschedule_messages',
  `update bus_messages m set available_at = v.at, lease_token = null
  from jsonb_to_recordset($1::jsonb) as v(seq bigint, token uuid, at bigint)
  where m.seq = v.seq and m.lease_token = v.token and m.seq = any($2::bigint[])`,
);

/** Puts retried messages back, each at its own time, unless another consumer holds them now. */
export const rescheduleMessages = (
  db: Database,
  items: ReadonlyArray<{ seq: number; token: string; at: number }>,
) => reschedule(db, JSON.stringify(items), seqArray(items.map((i) => i.seq)));

// The claimed seqs go to the update as an array, for the reason given at seqArray.
const claim = prepared<ClaimedRow>(
  'bus_claim_messages',
  `update bus_messages m
  set attempts = m.attempts + 1, available_at = $4::bigint, lease_token = $5::uuid
  where m.seq = any(array(
    select seq from bus_messages
    where topic = $1 and available_at <= $2::bigint
    order by available_at, seq
    limit $3::int
    for update skip locked
  ))
  returning m.seq, m.msg_id, m.payload, m.attempts`,
);

/** Leases up to `n` due messages of a topic until `until`, under `token`. */
export const claimMessages = (
  db: Database,
  topic: string,
  now: number,
  n: number,
  until: number,
  token: string,
) => claim(db, topic, now, n, until, token);

const due = prepared<{ at: string | number | null }>(
  'bus_next_due',
  `select min(available_at) as at from bus_messages where topic = $1`,
);

/** When the earliest message of a topic becomes claimable (clock milliseconds), or null if none. */
export const nextDueAt = async (db: Database, topic: string): Promise<number | null> => {
  const [row] = await due(db, topic);
  return row?.at == null ? null : Number(row.at);
};

const stats = prepared<{ topic: string; depth: string | number; oldest: string | number | null }>(
  'bus_topic_stats',
  `select topic, count(*) as depth, min(published_at) as oldest from bus_messages group by topic`,
);

/** Each topic's messages not yet settled, and when the oldest was published (clock milliseconds). */
export const topicStats = async (db: Database) =>
  (await stats(db)).map((r) => ({
    topic: r.topic,
    depth: Number(r.depth),
    oldest: r.oldest == null ? null : Number(r.oldest),
  }));
