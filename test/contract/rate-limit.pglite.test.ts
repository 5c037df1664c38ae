import { freshPglite } from '../helpers/pglite.ts';
import { rateLimitContract } from './rate-limit.contract.ts';

// One process: both "replicas" are the one storage, and the buckets stay in memory.
rateLimitContract('PGlite (in memory)', async () => {
  const storage = await freshPglite();
  return { replicas: [storage, storage], cleanup: () => storage.close() };
});
