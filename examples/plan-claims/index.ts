import { sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import {
  beforeTokenIssued,
  consistentWrite,
  defineCapability,
  defineErrors,
  definePlugin,
  envText,
  ok,
  type Storage,
} from 'identity-service/core';
import * as v from 'valibot';
import { migrations } from './migrations.ts';

export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** What this plugin offers others: the plan of an organization. */
export interface PlanLookup {
  planOf(orgId: string): Promise<Plan | undefined>;
}
export const planLookup = defineCapability<PlanLookup>('planLookup');

export interface PlanClaimsOptions {
  /** The plan tokens carry when the organization has set none; undefined adds no claim. @default undefined */
  defaultPlan?: Plan;
}

const settings = v.object({
  /** The claim that carries the plan in identity tokens. */
  PLAN_CLAIM_NAME: envText(
    'PLAN_CLAIM_NAME',
    'must be a claim name of letters, digits and _ (1 to 64)',
    (s) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(s),
  ),
});

/** The plugin's error codes, each with its status and message. */
export const PlanErrors = defineErrors({
  PLAN_NOT_SET: { status: 404, message: 'this organization has set no plan' },
});

// Registered JWT claims and the service's own can never be set by a plugin.
const RESERVED = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'oid', 'person_id']);

async function readPlan(storage: Storage, orgId: string): Promise<Plan | undefined> {
  const rows = await storage.query<{ plan: Plan }>(
    sql`select plan from plan_claims_plans where org_id = ${orgId}`,
  );
  return rows[0]?.plan;
}

/**
 * Plan claims: an organization sets its plan (`PUT /plan`), and every identity token issued for its
 * persons carries it in a claim (`plan`, or PLAN_CLAIM_NAME), through the `beforeTokenIssued` hook.
 *
 * @example
 * export default defineService({ plugins: [attributes(), webhooks(), planClaims({ defaultPlan: 'free' })] });
 */
export const planClaims = (options: PlanClaimsOptions = {}) =>
  definePlugin({
    id: 'plan-claims',
    migrations,
    settings,
    provides: { planLookup },
    setup(ctx) {
      const claim = ctx.settings.PLAN_CLAIM_NAME ?? 'plan';
      if (RESERVED.has(claim))
        throw new Error(`plan-claims: PLAN_CLAIM_NAME may not be the registered claim ${claim}`);
      const lookup: PlanLookup = {
        planOf: async (orgId) => (await readPlan(ctx.storage, orgId)) ?? options.defaultPlan,
      };
      const routes = new Elysia()
        .use(ctx.auth)
        .get('/plan', async ({ org }) => ok({ plan: (await lookup.planOf(org.id)) ?? null }), {
          apiKey: true,
          detail: { summary: "Read the organization's plan", tags: ['Plan claims'] },
        })
        .put(
          '/plan',
          async ({ org, body, request, set }) => {
            await consistentWrite(request, ctx.headers, () =>
              ctx.storage.query(
                sql`insert into plan_claims_plans (org_id, plan) values (${org.id}, ${body.plan})
                    on conflict (org_id) do update set plan = excluded.plan, updated_at = now()`,
              ),
            );
            set.status = 204;
          },
          {
            apiKey: true,
            body: v.object({
              plan: v.picklist(PLANS, `must be one of ${PLANS.join(', ')}`),
            }),
            detail: { summary: "Set the organization's plan", tags: ['Plan claims'] },
          },
        )
        .delete(
          '/plan',
          async ({ org, request, set }) => {
            const removed = await consistentWrite(request, ctx.headers, () =>
              ctx.storage.query<{ org_id: string }>(
                sql`delete from plan_claims_plans where org_id = ${org.id} returning org_id`,
              ),
            );
            if (removed.length === 0) throw PlanErrors.PLAN_NOT_SET();
            set.status = 204;
          },
          { apiKey: true, detail: { summary: "Forget the organization's plan", tags: ['Plan claims'] } },
        );
      return {
        routes,
        provide: { planLookup: lookup },
        attach: [
          beforeTokenIssued.attach({
            async run(draft) {
              const plan = await lookup.planOf(draft.orgId);
              return plan ? { claims: { [claim]: plan } } : undefined;
            },
          }),
        ],
      };
    },
  });
