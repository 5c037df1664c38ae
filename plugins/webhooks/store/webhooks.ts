import { and, asc, count, eq, sql } from 'drizzle-orm';

import { isUuid, uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SecretBox } from '../../../core/ports/secret-box.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { WebhookErrors } from '../errors.ts';
import { webhooks, webhookTriggers } from '../schema.ts';
import { type CustomHeaders, sealHeaders } from './custom-headers.ts';

export type WebhookRow = typeof webhooks.$inferSelect;

/** A webhook's fields after validation; `undefined` leaves a field as it is (PATCH), `null` clears it. */
export interface WebhookInput {
  name?: string;
  description?: string;
  targetUrl?: string;
  customHeaders?: CustomHeaders | null;
  timeoutNs?: number | null;
}

export interface TriggerRef {
  triggerType: string;
  triggerName: string;
}

/** Postgres said `unique_violation` somewhere in the error's cause chain (drizzle wraps driver errors). */
function isUniqueViolation(err: unknown): boolean {
  for (let e = err; e instanceof Object; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === '23505') return true;
  return false;
}

const urlTaken = (url: string) => WebhookErrors.TARGET_URL_TAKEN(url);

export const webhookNotFound = (id: string) => WebhookErrors.WEBHOOK_NOT_FOUND(id);

/** 400 for a path parameter that cannot be a webhook id. */
export function checkWebhookId(id: string): string {
  if (!isUuid(id)) throw WebhookErrors.INVALID_WEBHOOK_ID(id);
  return id.toLowerCase();
}

/** Webhooks and their triggers, always scoped to one organization. */
export function createWebhookStore(deps: {
  storage: Storage;
  secrets: SecretBox;
  clock: Clock;
  maxWebhooks: number;
}) {
  const { storage, secrets, clock } = deps;
  const db = storage.db;
  const inOrg = (orgId: string, id: string) => and(eq(webhooks.orgId, orgId), eq(webhooks.id, id));

  return {
    /**
     * Creates a webhook, within the organization's allowance. Creations of one organization take turns
     * (an advisory lock for the transaction), so concurrent creates cannot count the same N and all
     * insert: the allowance holds exactly.
     */
    async create(orgId: string, input: Required<Pick<WebhookInput, 'name' | 'targetUrl'>> & WebhookInput) {
      const id = uuidv7(clock.now());
      const customHeaders = await sealHeaders(secrets, id, input.customHeaders);
      try {
        return await storage.transaction(async (tx) => {
          await tx.query(sql`select pg_advisory_xact_lock(hashtextextended(${`webhooks:${orgId}`}, 0))`);
          const [{ n } = { n: 0 }] = await tx.db
            .select({ n: count() })
            .from(webhooks)
            .where(eq(webhooks.orgId, orgId));
          if (n >= deps.maxWebhooks) throw WebhookErrors.TOO_MANY_WEBHOOKS(n, deps.maxWebhooks);
          const now = clock.now();
          const [row] = await tx.db
            .insert(webhooks)
            .values({
              id,
              orgId,
              name: input.name,
              description: input.description ?? '',
              targetUrl: input.targetUrl,
              customHeaders,
              timeoutNs: input.timeoutNs ?? null,
              createdAt: now,
              updatedAt: now,
            })
            .returning();
          return row!;
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw urlTaken(input.targetUrl);
        throw err;
      }
    },

    list: (orgId: string) =>
      db.select().from(webhooks).where(eq(webhooks.orgId, orgId)).orderBy(asc(webhooks.id)),

    async get(orgId: string, id: string): Promise<WebhookRow> {
      const [row] = await db.select().from(webhooks).where(inOrg(orgId, id));
      if (!row) throw webhookNotFound(id);
      return row;
    },

    async update(orgId: string, id: string, input: WebhookInput): Promise<WebhookRow> {
      const set: Partial<typeof webhooks.$inferInsert> = { updatedAt: clock.now() };
      if (input.name !== undefined) set.name = input.name;
      if (input.description !== undefined) set.description = input.description;
      if (input.targetUrl !== undefined) set.targetUrl = input.targetUrl;
      if (input.timeoutNs !== undefined) set.timeoutNs = input.timeoutNs;
      if (input.customHeaders !== undefined)
        set.customHeaders = await sealHeaders(secrets, id, input.customHeaders);
      try {
        const [row] = await db.update(webhooks).set(set).where(inOrg(orgId, id)).returning();
        if (!row) throw webhookNotFound(id);
        return row;
      } catch (err) {
        if (isUniqueViolation(err)) throw urlTaken(input.targetUrl!);
        throw err;
      }
    },

    /** Deletes the webhook; its triggers go with it (foreign key), its pending deliveries are dropped later. */
    async remove(orgId: string, id: string): Promise<void> {
      const rows = await db.delete(webhooks).where(inOrg(orgId, id)).returning({ id: webhooks.id });
      if (rows.length === 0) throw webhookNotFound(id);
    },

    /** Adds a trigger; the same trigger twice is one trigger. */
    async addTrigger(orgId: string, webhookId: string, t: TriggerRef): Promise<void> {
      // Insert only if the webhook is this organization's: one statement, no window for a delete.
      const rows = await storage.query<{ found: boolean }>(sql`
        with w as (select id from webhooks where id = ${webhookId} and org_id = ${orgId}),
        ins as (
          insert into webhook_triggers (webhook_id, org_id, trigger_type, trigger_name, created_at)
          select id, ${orgId}, ${t.triggerType}, ${t.triggerName}, ${clock.now()} from w
          on conflict do nothing
        )
        select exists(select 1 from w) as found`);
      if (!rows[0]?.found) throw webhookNotFound(webhookId);
    },

    async listTriggers(orgId: string, webhookId: string): Promise<TriggerRef[]> {
      await this.get(orgId, webhookId);
      return db
        .select({ triggerType: webhookTriggers.triggerType, triggerName: webhookTriggers.triggerName })
        .from(webhookTriggers)
        .where(and(eq(webhookTriggers.webhookId, webhookId), eq(webhookTriggers.orgId, orgId)))
        .orderBy(asc(webhookTriggers.createdAt), asc(webhookTriggers.triggerName));
    },

    async removeTrigger(orgId: string, webhookId: string, t: TriggerRef): Promise<void> {
      await this.get(orgId, webhookId);
      const rows = await db
        .delete(webhookTriggers)
        .where(
          and(
            eq(webhookTriggers.webhookId, webhookId),
            eq(webhookTriggers.orgId, orgId),
            eq(webhookTriggers.triggerType, t.triggerType),
            eq(webhookTriggers.triggerName, t.triggerName),
          ),
        )
        .returning({ name: webhookTriggers.triggerName });
      if (rows.length === 0)
        throw WebhookErrors.TRIGGER_NOT_FOUND(
          `webhook ${webhookId} has no ${t.triggerType} trigger ${t.triggerName}`,
        );
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
