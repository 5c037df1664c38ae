import { createFetchDelivery } from '../../adapters/fetch-delivery/index.ts';
import { createLogger } from '../../core/log.ts';
import type { HttpDelivery } from '../../core/ports/http-delivery.ts';
import { httpDeliveryContract } from './http-delivery.contract.ts';

const log = createLogger('silent');

httpDeliveryContract('fetch on Bun', async () => {
  const made: HttpDelivery[] = [];
  return {
    make: async (setup) => {
      const delivery = createFetchDelivery({ ...setup, log });
      made.push(delivery);
      return delivery;
    },
    cleanup: async () => {
      await Promise.all(made.map((d) => d.close()));
    },
  };
});
