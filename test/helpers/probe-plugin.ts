import { sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import * as v from 'valibot';
import { consistentWrite } from '../../core/http/consistency.ts';
import { ok } from '../../core/http/envelope.ts';
import { definePlugin, type Worker } from '../../core/plugin.ts';

/** A small plugin that exercises the contract in tests: a table, routes with a body schema, a worker. */
export const probePlugin = (state: { started: number; stopped: number } = { started: 0, stopped: 0 }) =>
  definePlugin({
    id: 'probe',
    migrations: {
      name: 'probe',
      migrations: [
        {
          id: '0001_init',
          statements: ['create table if not exists probe_items (name text primary key, n int not null)'],
        },
      ],
    },
    emits: [],
    setup(ctx) {
      const worker: Worker = {
        name: 'probe-worker',
        start: () => {
          state.started++;
        },
        stop: async () => {
          state.stopped++;
        },
      };
      const routes = new Elysia()
        .use(ctx.auth)
        .post(
          '/probe/items',
          async ({ body, request, set, org }) => {
            await consistentWrite(request, ctx.headers, () =>
              ctx.storage.transaction(async (tx) => {
                // A wait inside the transaction (PGlite runs pg_sleep synchronously and would block the event loop).
                if (body.slow_ms) await new Promise((r) => setTimeout(r, body.slow_ms));
                await tx.query(
                  sql`insert into probe_items (name, n) values (${body.name}, ${body.count ?? 1})`,
                );
              }),
            );
            set.status = 201;
            return ok({ name: body.name, org: org.id });
          },
          {
            apiKey: true,
            body: v.object({
              name: v.pipe(
                v.string(),
                v.minLength(1, 'must not be empty'),
                v.maxLength(20, 'must be at most 20 characters'),
              ),
              count: v.optional(
                v.pipe(
                  v.number(),
                  v.integer('must be an integer'),
                  v.minValue(1, 'must be at least 1'),
                  v.maxValue(10, 'must be at most 10'),
                ),
              ),
              slow_ms: v.optional(v.number()),
            }),
            detail: { summary: 'Create a probe item', tags: ['Probe'] },
          },
        )
        .get(
          '/probe/items/:name',
          async ({ params }) => {
            const rows = await ctx.storage.query<{ name: string; n: number }>(
              sql`select name, n from probe_items where name = ${params.name}`,
            );
            return ok(rows[0] ?? null);
          },
          { apiKey: true },
        )
        .delete(
          '/probe/items/:name',
          async ({ params, request, set }) => {
            await consistentWrite(request, ctx.headers, () =>
              ctx.storage.query(sql`delete from probe_items where name = ${params.name}`),
            );
            set.status = 204;
          },
          { apiKey: true, detail: { summary: 'Delete a probe item', tags: ['Probe'] } },
        );
      return { routes, workers: [worker] };
    },
  });
