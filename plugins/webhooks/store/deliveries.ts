import { sql } from 'drizzle-orm';

import { triggerListName } from '../../../core/events/trigger-names.ts';
import { base64url, fromBase64url, isUuid } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { EventBus } from '../../../core/ports/event-bus.ts';
import type { Storage, Transaction } from '../../../core/ports/storage.ts';
import { isoOf } from '../api/json.ts';
import { WebhookErrors } from '../errors.ts';
import { createDeliveries } from '../pipeline/enqueue.ts';

/** Deliveries answered per page at most, and resent per recover call at most. */
export const OPERATOR_LIMITS = { page: 100, defaultPage: 20, recover: 1000 } as const;

type Row = Record<string, string | number | boolean | null>;

const str = (v: unknown) => (v === null || v === undefined ? undefined : String(v));
const num = (v: unknown) => (v === null || v === undefined ? undefined : Number(v));

function attemptJson(a: Row) {
  return {
    attempt: Number(a.attempt),
    jti: String(a.jti),
    started_at: isoOf(a.started_at as number)!,
    latency_ms: Number(a.latency_ms),
    ok: Boolean(a.ok),
    status_code: num(a.status_code),
    error_kind: str(a.error_kind),
    error: str(a.error),
    response: str(a.response),
    outcome: String(a.outcome) as 'succeeded' | 'retry' | 'dropped',
    retry_at: isoOf(a.retry_at as number),
  };
}

function deliveryJson(d: Row, attempts: Row[]) {
  return {
    id: String(d.id),
    webhook_id: String(d.webhook_id),
    event_id: String(d.event_id),
    trigger_type: String(d.trigger_type),
    trigger_name:
      d.trigger_type === 'event' ? triggerListName(String(d.trigger_name)) : String(d.trigger_name),
    status: String(d.status) as 'pending' | 'retrying' | 'succeeded' | 'dropped',
    attempt_count: Number(d.attempts),
    created_at: isoOf(d.created_at as number)!,
    first_attempt_at: isoOf(d.first_attempt_at as number),
    last_attempt_at: isoOf(d.last_attempt_at as number),
    next_attempt_at: isoOf(d.next_attempt_at as number),
    settled_at: isoOf(d.settled_at as number),
    last_status_code: num(d.last_status_code),
    last_error: str(d.last_error),
    resend_of: str(d.resend_of),
    resent_as: str(d.resent_as),
    attempts: attempts.map(attemptJson),
  };
}

export type DeliveryJson = ReturnType<typeof deliveryJson>;

const encodeCursor = (id: string) => base64url(new TextEncoder().encode(id));
function decodeCursor(cursor: string): string {
  try {
    const id = new TextDecoder().decode(fromBase64url(cursor));
    if (isUuid(id)) return id;
  } catch {}
  throw WebhookErrors.INVALID_CURSOR(cursor);
}

/** What operators see and do with a webhook's deliveries (docs/api-contract.md, "Beyond the spec"). */
export function createOperatorStore(deps: { storage: Storage; bus: EventBus; clock: Clock }) {
  const { storage, bus, clock } = deps;

  async function readAttempts(ids: string[]): Promise<Map<string, Row[]>> {
    const out = new Map<string, Row[]>(ids.map((id) => [id, []]));
    if (ids.length === 0) return out;
    const rows = await storage.query<Row>(sql`
      select * from webhook_attempts where delivery_id = any(${`{${ids.join(',')}}`}::uuid[])
      order by delivery_id, attempt, id`);
    for (const r of rows) out.get(String(r.delivery_id))?.push(r);
    return out;
  }

  /** Makes a new delivery of each of these settled ones, and marks them resent, in one transaction. */
  function resendRows(orgId: string, rows: Row[]): Promise<string[]> {
    return storage.transaction((tx) => resendIn(tx, orgId, rows));
  }

  /** resendRows within the caller's transaction. */
  async function resendIn(tx: Transaction, orgId: string, rows: Row[]): Promise<string[]> {
    const sources = rows.map(() => `resend:${crypto.randomUUID()}`);
    const made = await createDeliveries(
      tx,
      bus,
      clock.now(),
      [],
      rows.map((d, i) => ({
        orgId,
        webhookId: String(d.webhook_id),
        eventId: String(d.event_id),
        source: sources[i]!,
        triggerType: String(d.trigger_type),
        triggerName: String(d.trigger_name),
        resendOf: String(d.id),
      })),
    );
    const bySource = new Map(made.map((m) => [m.source, m.id]));
    const ids = sources.map((s) => bySource.get(s)!);
    const pairs = rows.map((d, i) => ({ id: d.id, as_id: ids[i] }));
    await tx.query(sql`
      update webhook_deliveries d set resent_as = p.as_id
      from jsonb_to_recordset(${JSON.stringify(pairs)}::jsonb) as p(id uuid, as_id uuid)
      where d.id = p.id`);
    return ids;
  }

  return {
    async list(orgId: string, webhookId: string, q: { status?: string; limit: number; cursor?: string }) {
      const before = q.cursor ? decodeCursor(q.cursor) : undefined;
      const status = q.status ? sql`and status = ${q.status}` : sql``;
      const rows = await storage.query<Row>(sql`
        select * from webhook_deliveries
        where webhook_id = ${webhookId} and org_id = ${orgId} ${status}
          ${before ? sql`and id < ${before}` : sql``}
        order by id desc limit ${q.limit + 1}`);
      const [{ n } = { n: 0 }] = await storage.query<{ n: number }>(sql`
        select count(*)::int as n from webhook_deliveries
        where webhook_id = ${webhookId} and org_id = ${orgId} ${status}`);
      const page = rows.slice(0, q.limit);
      const attempts = await readAttempts(page.map((r) => String(r.id)));
      return {
        deliveries: page.map((d) => deliveryJson(d, attempts.get(String(d.id)) ?? [])),
        cursor: rows.length > q.limit ? encodeCursor(String(page.at(-1)!.id)) : '',
        total: Number(n),
      };
    },

    async resend(orgId: string, webhookId: string, deliveryId: string): Promise<DeliveryJson> {
      const [d] = await storage.query<Row>(sql`
        select d.*, (e.event_id is not null) as stored from webhook_deliveries d
        left join webhook_events e on e.event_id = d.event_id
        where d.id = ${deliveryId} and d.webhook_id = ${webhookId} and d.org_id = ${orgId}`);
      if (!d) throw WebhookErrors.DELIVERY_NOT_FOUND(webhookId, deliveryId);
      if (d.trigger_type === 'sync_hook') throw WebhookErrors.SYNC_HOOK_NOT_RESENT(deliveryId);
      if (d.status === 'pending' || d.status === 'retrying')
        throw WebhookErrors.DELIVERY_IN_PROGRESS(deliveryId, d.status);
      if (!d.stored) throw WebhookErrors.DELIVERY_EVENT_GONE(deliveryId);
      const [id] = await resendRows(orgId, [d]);
      const [made] = await storage.query<Row>(sql`select * from webhook_deliveries where id = ${id!}`);
      return deliveryJson(made!, []);
    },

    /** Resends the dropped deliveries made since `since` that no earlier recover or resend has resent. */
    // The rows are claimed in the transaction that marks them resent (locked, and skipped while another
    // recover holds them), so recovers running at once resend each dropped delivery once between them.
    async recover(orgId: string, webhookId: string, since: number): Promise<string[]> {
      return storage.transaction(async (tx) => {
        const rows = await tx.query<Row>(sql`
          select d.* from webhook_deliveries d
          join webhook_events e on e.event_id = d.event_id
          where d.webhook_id = ${webhookId} and d.org_id = ${orgId} and d.status = 'dropped'
            and d.resent_as is null and d.created_at >= ${since}
          order by d.id limit ${OPERATOR_LIMITS.recover}
          for update of d skip locked`);
        if (rows.length === 0) return [];
        return resendIn(tx, orgId, rows);
      });
    },
  };
}

export type OperatorStore = ReturnType<typeof createOperatorStore>;
