import { freshPglite } from '../helpers/pglite.ts';
import { resealSuite } from './reseal.behaviour.ts';

resealSuite('PGlite', async () => {
  const storage = await freshPglite();
  return { storage: async () => storage, drop: async () => {} };
});
