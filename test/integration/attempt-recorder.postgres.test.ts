import { afterAll, beforeAll, describe, it } from 'bun:test';
import type { Storage } from '../../core/ports/storage.ts';
import { allMigrationSets } from '../helpers/migration-sets.ts';
import { recordsABatchWhole } from '../unit/webhooks/attempt-recorder.case.ts';
import { freshPostgres } from './support.ts';

let db: Awaited<ReturnType<typeof freshPostgres>>;
let storage: Storage;
beforeAll(async () => {
  db = await freshPostgres(allMigrationSets());
  storage = db.storage;
});
afterAll(async () => {
  await db.drop();
});

describe('attempt recorder on Postgres', () => {
  it('records a batch of hundreds whole: each delivery moves on, a settled one stays settled', () =>
    recordsABatchWhole(storage));
});
