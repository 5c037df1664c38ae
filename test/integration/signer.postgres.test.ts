import { migrations as localKeys } from '../../adapters/local-keys/migrations/index.ts';
import { createAesGcmSecretBox, parseMasterKeys } from '../../adapters/local-keys/secret-box.ts';
import { createLocalKeysSigner } from '../../adapters/local-keys/signer.ts';
import { migrate } from '../../core/db/migrate.ts';
import { signerContract } from '../contract/signer.contract.ts';
import { manualClock } from '../helpers/clock.ts';
import { isolatedPostgres } from './support.ts';

const GRACE = 3600_000;

signerContract(
  'local keys on Postgres',
  async () => {
    const pg = await isolatedPostgres('signer');
    await migrate(pg.storage, [localKeys]);
    const second = await pg.another();
    const clock = manualClock(Date.now());
    const secrets = await createAesGcmSecretBox(await parseMasterKeys([btoa('k'.repeat(32))]));
    return {
      signer: createLocalKeysSigner({ storage: pg.storage, secrets, clock, graceMs: GRACE, cacheMs: 0 }),
      storage: pg.storage,
      advance: clock.advance,
      another: () => createLocalKeysSigner({ storage: second, secrets, clock, graceMs: GRACE, cacheMs: 0 }),
      cleanup: async () => {
        await second.close();
        await pg.storage.close();
        await pg.drop();
      },
    };
  },
  GRACE,
);
