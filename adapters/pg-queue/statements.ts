import { type SQL, sql } from 'drizzle-orm';

/**
 * The queue's hot statements. Each has one fixed text whatever the batch size (the rows travel as one
 * JSON parameter), so postgres.js prepares it once instead of planning a new statement per batch.
 */
export interface QueueRow {
  topic: string;
  msg_id: string;
  payload: unknown;
  available_at: number;
  published_at: number;
}

/** Inserts rows (a repeated id of a topic is ignored) and notifies each topic's listeners at commit. */
export const insertMessages = (rows: readonly QueueRow[]): SQL => sql`
  with ins as (
    insert into bus_messages (topic, msg_id, payload, available_at, published_at)
    select r.topic, r.msg_id, r.payload, r.available_at, r.published_at
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
      as r(topic text, msg_id text, payload jsonb, available_at bigint, published_at bigint)
    on conflict do nothing
    returning topic
  )
  select pg_notify('bus_' || replace(t.topic, '-', '_'), '') from (select distinct topic from ins) t`;

/** Deletes acknowledged (or dropped) messages. */
export const deleteMessages = (seqs: readonly number[]): SQL => sql`
  delete from bus_messages where seq in (select jsonb_array_elements_text(${JSON.stringify(seqs)}::jsonb)::bigint)`;

/** Puts retried messages back, each at its own time, unless another consumer holds them now. */
export const rescheduleMessages = (
  items: ReadonlyArray<{ seq: number; token: string; at: number }>,
): SQL => sql`
  update bus_messages m set available_at = v.at, lease_token = null
  from jsonb_to_recordset(${JSON.stringify(items)}::jsonb) as v(seq bigint, token uuid, at bigint)
  where m.seq = v.seq and m.lease_token = v.token`;
