import { storageContract } from '../contract/storage.contract.ts';
import { isolatedPostgres } from './support.ts';

storageContract('Postgres through postgres.js', async () => {
  const pg = await isolatedPostgres('storage');
  return {
    storage: pg.storage,
    another: pg.another,
    cleanup: async () => {
      await pg.storage.close();
      await pg.drop();
    },
  };
});
