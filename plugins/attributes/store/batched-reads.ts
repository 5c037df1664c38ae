import { batchGate } from '../../../core/batching/batch-gate.ts';
import { createBatchLoader } from '../../../core/batching/batch-loader.ts';
import { batchingFor } from '../../../core/batching/group-commit.ts';
import { arrayLiteral } from '../../../core/db/prepared.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { type BucketRow, pairKey, selectBuckets } from './statements.ts';

/**
 * Reads of whole buckets that arrive together, answered by one statement. A request's buckets are one
 * key of the batch, so they are read in the same statement (one snapshot) even when the batch is split.
 */
export function createBucketReads(storage: Storage) {
  const loader = createBatchLoader<Map<string, BucketRow>>(
    async (keys) => {
      const asked = keys.map((k) => JSON.parse(k) as [string, string[]]);
      const pairs = new Map<string, [string, string]>();
      for (const [orgId, buckets] of asked) for (const b of buckets) pairs.set(pairKey(orgId, b), [orgId, b]);
      const list = [...pairs.values()];
      const rows = await selectBuckets(
        storage.db,
        arrayLiteral(list.map(([o]) => o)),
        arrayLiteral(list.map(([, b]) => b)),
      );
      const byPair = new Map<string, BucketRow>();
      for (const r of rows)
        byPair.set(pairKey(r.org_id, r.bucket), { bucket: r.bucket, attributes: r.attributes });
      return new Map(
        keys.map((key, i) => {
          const [orgId, buckets] = asked[i]!;
          const found = new Map<string, BucketRow>();
          for (const b of buckets) {
            const row = byPair.get(pairKey(orgId, b));
            if (row) found.set(b, row);
          }
          return [key, found];
        }),
      );
    },
    { concurrency: batchingFor(storage).concurrency },
  );
  const gate = batchGate(storage);
  return {
    /** The rows of these buckets of the organization (an ID in lower case) that have one. */
    async read(orgId: string, buckets: readonly string[]): Promise<BucketRow[]> {
      await gate();
      const found = await loader.load(JSON.stringify([orgId, buckets]));
      return [...found!.values()];
    },
  };
}
