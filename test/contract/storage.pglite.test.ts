import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteStorage } from '../../adapters/pglite/index.ts';
import { baseDataDir, freshPglite } from '../helpers/pglite.ts';
import { storageContract } from './storage.contract.ts';

// PGlite admits one handle per database: the "other replica" is the same handle.
storageContract('PGlite in memory', async () => {
  const storage = await freshPglite();
  return { storage, another: async () => storage, cleanup: () => storage.close() };
});

storageContract('PGlite on disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-contract-'));
  const storage = await createPgliteStorage({ dataDir: dir, loadDataDir: await baseDataDir() });
  return {
    storage,
    another: async () => storage,
    cleanup: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
