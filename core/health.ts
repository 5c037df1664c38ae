import { Elysia } from 'elysia';
import * as v from 'valibot';
import { ErrorEnvelopeSchema, resultOf } from './http/envelope.ts';
import type { EventBus } from './ports/event-bus.ts';
import type { Storage } from './ports/storage.ts';

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  ]);

const Checks = v.record(v.string(), v.string());
const Readiness = resultOf(v.object({ status: v.literal('ready'), checks: Checks }));
const NotReady = v.object({
  ...ErrorEnvelopeSchema.entries,
  result: v.object({ status: v.literal('not ready'), checks: Checks }),
});

/** `/healthz`: the process answers. `/readyz`: storage and bus answer too (503 otherwise). */
export const healthRoutes = (storage: Storage, bus: EventBus, isStopping: () => boolean) =>
  new Elysia()
    .get('/healthz', () => ({ result: { status: 'ok' as const } }), {
      detail: { summary: 'Liveness', tags: ['Operations'] },
      response: { 200: resultOf(v.object({ status: v.literal('ok') })) },
    })
    .get(
      '/readyz',
      async ({ set }) => {
        const checks: Record<string, string> = {};
        const probe = async (name: string, fn: () => Promise<void>) => {
          try {
            await within(fn(), 2000);
            checks[name] = 'ok';
          } catch (e) {
            checks[name] = (e as Error).message;
          }
        };
        await Promise.all([probe('storage', () => storage.ping()), probe('bus', () => bus.ping())]);
        if (isStopping()) checks.shutdown = 'stopping';
        const ready = Object.values(checks).every((c) => c === 'ok');
        if (!ready) {
          set.status = 503;
          return {
            errors: [{ httpcode: 503, message: `not ready: ${JSON.stringify(checks)}` }],
            result: { status: 'not ready', checks },
          };
        }
        return { result: { status: 'ready', checks } };
      },
      {
        detail: { summary: 'Readiness: storage and bus reachable', tags: ['Operations'] },
        response: { 200: Readiness, 503: NotReady },
      },
    );
