import { createGuardedFetch } from '../../adapters/fetch-delivery/index.ts';
import { createLogger } from '../../core/log.ts';
import { guardedFetchContract } from './guarded-fetch.contract.ts';

const log = createLogger('silent');

guardedFetchContract('fetch on Bun', async () => {
  const made: Array<ReturnType<typeof createGuardedFetch>> = [];
  return {
    make: async (setup) => {
      const guarded = createGuardedFetch({
        ...setup,
        setting: 'SSO_ALLOW_PRIVATE',
        purpose: 'SSO provider',
        log,
      });
      made.push(guarded);
      return (url, call = {}) =>
        guarded.fetch(url, {
          ...(call.method ? { method: call.method } : {}),
          ...(call.headers ? { headers: call.headers } : {}),
          ...(call.form ? { body: new URLSearchParams(call.form) } : {}),
        });
    },
    cleanup: async () => {
      await Promise.all(made.map((g) => g.close()));
    },
  };
});
