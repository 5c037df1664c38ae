// The same HttpDelivery contract, run by the adapter inside real Node and Deno processes: there the
// adapter uses its undici transport, which Bun cannot run in-process (Bun's `undici` is a stub).
import { startDeliveryWorker } from '../runtimes/delivery-bridge.ts';
import { httpDeliveryContract } from './http-delivery.contract.ts';

for (const runtime of ['node', 'deno'] as const)
  httpDeliveryContract(`undici on ${runtime}`, async () => {
    const worker = await startDeliveryWorker(runtime);
    return { make: (setup) => worker.make(setup), cleanup: () => worker.stop() };
  });
