// The guarded-fetch contract run inside real Node and Deno processes, where the undici transport
// carries it (Bun cannot run undici in-process: its `undici` is a stub).
import { startDeliveryWorker } from '../runtimes/delivery-bridge.ts';
import { guardedFetchContract } from './guarded-fetch.contract.ts';

for (const runtime of ['node', 'deno'] as const)
  guardedFetchContract(`undici on ${runtime}`, async () => {
    const worker = await startDeliveryWorker(runtime);
    return {
      make: async (setup) => (await worker.guard(setup)).fetch,
      cleanup: () => worker.stop(),
    };
  });
