import { join } from 'node:path';
import type {
  DeliveryErrorKind,
  DeliveryRequest,
  DeliveryResult,
  HttpDelivery,
} from '../../core/ports/http-delivery.ts';
import { GuardedFetchError } from '../../core/ports/outbound-requests.ts';
import type { GuardedCall, GuardedSetup } from '../contract/guarded-fetch.contract.ts';
import type { DeliverySetup } from '../contract/http-delivery.contract.ts';
import type { WorkerCommand } from './delivery-worker.ts';

const ROOT = join(import.meta.dir, '..', '..');
const WORKER = join(import.meta.dir, 'delivery-worker.ts');

/** A Node or Deno process hosting real fetch-delivery adapters, driven from a Bun test. */
export interface DeliveryWorker {
  /** What the worker's own runtime detection says, and its process.versions. */
  info: { runtime: string; versions: Record<string, string> };
  make(setup: DeliverySetup): Promise<HttpDelivery>;
  /** A guarded fetch in the worker: its answer rebuilt as a Response, its refusal as a GuardedFetchError. */
  guard(setup: GuardedSetup): Promise<{
    fetch(url: string, call?: GuardedCall): Promise<Response>;
    close(): Promise<void>;
  }>;
  stop(): Promise<void>;
}

type Command = WorkerCommand extends infer C ? (C extends { id: number } ? Omit<C, 'id'> : never) : never;

async function command(runtime: 'node' | 'deno'): Promise<string[]> {
  if (runtime === 'deno') return [join(ROOT, 'node_modules', '.bin', 'deno'), 'run', '-A', '--quiet', WORKER];
  // Node 20 cannot run TypeScript: bundle the worker, leaving packages (undici, ipaddr.js) to node_modules.
  const outdir = join(ROOT, '.cache', 'runtimes');
  const built = await Bun.build({ entrypoints: [WORKER], outdir, target: 'node', packages: 'external' });
  if (!built.success) throw new AggregateError(built.logs, 'bundling the delivery worker failed');
  return ['node', built.outputs[0]!.path];
}

/** Starts the worker and checks it really runs on `runtime`. */
export async function startDeliveryWorker(runtime: 'node' | 'deno'): Promise<DeliveryWorker> {
  const child = Bun.spawn(await command(runtime), {
    cwd: ROOT,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  let next = 0;
  void (async () => {
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { done, value } = await lines.read();
      if (done) break;
      buffered += value;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const answer = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        waiting.get(answer.id as number)?.(answer);
        waiting.delete(answer.id as number);
        newline = buffered.indexOf('\n');
      }
    }
  })();
  const send = (message: Command) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (answer) =>
        'thrown' in answer ? reject(new Error(`worker threw: ${answer.thrown}`)) : resolve(answer),
      );
      child.stdin.write(`${JSON.stringify({ ...message, id })}\n`);
      child.stdin.flush();
    });

  const info = (await send({ op: 'info' })) as unknown as DeliveryWorker['info'];
  if (info.runtime !== runtime) throw new Error(`the ${runtime} worker says it runs on ${info.runtime}`);
  return {
    info,
    async make(setup) {
      const { handle } = (await send({ op: 'make', setup })) as { handle: number };
      return {
        post: async (request: DeliveryRequest) =>
          ((await send({ op: 'post', handle, request })) as { result: DeliveryResult }).result,
        close: async () => {
          await send({ op: 'close', handle });
        },
      };
    },
    async guard(setup) {
      const { handle } = (await send({ op: 'guard', setup })) as { handle: number };
      return {
        async fetch(url: string, call: GuardedCall = {}) {
          const answer = await send({ op: 'fetch', handle, url, call });
          const refused = answer.refused as { kind: DeliveryErrorKind; message: string } | undefined;
          if (refused) throw new GuardedFetchError(refused.kind, refused.message);
          const { status, headers, body } = answer as {
            status: number;
            headers: [string, string][];
            body: string;
          };
          return new Response(status === 204 || status === 304 ? null : body, { status, headers });
        },
        close: async () => {
          await send({ op: 'unguard', handle });
        },
      };
    },
    async stop() {
      child.stdin.end();
      await child.exited;
    },
  };
}
