import { resealSuite } from '../unit/reseal.behaviour.ts';
import { isolatedPostgres } from './support.ts';

// Each service on a pool of its own, as replicas hold the database.
resealSuite('Postgres', async () => {
  const pg = await isolatedPostgres('reseal');
  let first = true;
  return {
    async storage() {
      if (!first) return pg.another();
      first = false;
      return pg.storage;
    },
    drop: pg.drop,
  };
});
