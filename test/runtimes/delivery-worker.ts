// Hosts real fetch-delivery adapters inside Node or Deno for the HttpDelivery contract run from Bun: one
// JSON message a line on stdin, one answer a line on stdout. Bun's own `undici` is a stub, so the undici
// transport can only be tested in the runtimes that use it. Node runs this after
// `bun build --target=node --packages=external`; Deno runs the TypeScript as it is.
import { createInterface } from 'node:readline';
import { createFetchDelivery, createGuardedFetch } from '../../adapters/fetch-delivery/index.ts';
import { detectRuntime } from '../../adapters/fetch-delivery/runtime.ts';
import { createLogger } from '../../core/log.ts';
import type { DeliveryRequest, HttpDelivery } from '../../core/ports/http-delivery.ts';
import { GuardedFetchError } from '../../core/ports/outbound-requests.ts';
import type { GuardedCall, GuardedSetup } from '../contract/guarded-fetch.contract.ts';

/** A message from the test process. */
export type WorkerCommand =
  | { id: number; op: 'info' }
  | {
      id: number;
      op: 'make';
      setup: { allowPrivate: string[]; hostMap: Record<string, string>; extraCaPem?: string };
    }
  | { id: number; op: 'post'; handle: number; request: DeliveryRequest }
  | { id: number; op: 'close'; handle: number }
  | { id: number; op: 'guard'; setup: GuardedSetup }
  | { id: number; op: 'fetch'; handle: number; url: string; call: GuardedCall }
  | { id: number; op: 'unguard'; handle: number };

const log = createLogger('silent');
const deliveries = new Map<number, HttpDelivery>();
const guards = new Map<number, ReturnType<typeof createGuardedFetch>>();
const reply = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function handle(command: WorkerCommand): Promise<object> {
  switch (command.op) {
    case 'info':
      return { runtime: detectRuntime(), versions: process.versions };
    case 'make': {
      const handle = deliveries.size + 1;
      deliveries.set(handle, createFetchDelivery({ ...command.setup, log }));
      return { handle };
    }
    case 'post':
      // post never throws: a rejection here is a bug the contract should see, so it is not caught below.
      return { result: await deliveries.get(command.handle)!.post(command.request) };
    case 'close':
      await deliveries.get(command.handle)?.close();
      return {};
    case 'guard': {
      const handle = guards.size + 1;
      const options = { ...command.setup, setting: 'SSO_ALLOW_PRIVATE', purpose: 'SSO provider', log };
      guards.set(handle, createGuardedFetch(options));
      return { handle };
    }
    case 'fetch': {
      const { method, headers, form } = command.call;
      try {
        const res = await guards.get(command.handle)!.fetch(command.url, {
          ...(method ? { method } : {}),
          ...(headers ? { headers } : {}),
          ...(form ? { body: new URLSearchParams(form) } : {}),
        });
        return { status: res.status, headers: [...res.headers], body: await res.text() };
      } catch (e) {
        if (e instanceof GuardedFetchError) return { refused: { kind: e.kind, message: e.message } };
        throw e;
      }
    }
    case 'unguard':
      await guards.get(command.handle)?.close();
      return {};
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const command = JSON.parse(line) as WorkerCommand;
  handle(command).then(
    (answer) => reply({ id: command.id, ...answer }),
    (e: unknown) => reply({ id: command.id, thrown: String(e) }),
  );
}
for (const delivery of deliveries.values()) await delivery.close();
