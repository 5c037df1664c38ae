import { createAesGcmSecretBox, parseMasterKeys } from '../../adapters/local-keys/secret-box.ts';
import { createLocalKeysSigner } from '../../adapters/local-keys/signer.ts';
import { manualClock } from '../helpers/clock.ts';
import { freshPglite } from '../helpers/pglite.ts';
import { signerContract } from './signer.contract.ts';

const GRACE = 3600_000;

signerContract(
  'local keys on PGlite',
  async () => {
    const storage = await freshPglite();
    const clock = manualClock(Date.now());
    const secrets = await createAesGcmSecretBox(await parseMasterKeys([btoa('k'.repeat(32))]));
    const make = () => createLocalKeysSigner({ storage, secrets, clock, graceMs: GRACE, cacheMs: 0 });
    return { signer: make(), storage, advance: clock.advance, another: make, cleanup: () => storage.close() };
  },
  GRACE,
);
