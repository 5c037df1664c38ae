import { describe, expect, it } from 'bun:test';
import { batchingFor } from '../../core/batching/group-commit.ts';

describe('batchingFor', () => {
  it('gives a single connection one lingering writer, so batches form while a statement runs', () => {
    expect(batchingFor({ writeConcurrency: 1 })).toEqual({ lingerMs: 2, concurrency: 1 });
  });

  it('gives a pool a few writers that never linger, at most 4 and never more than the pool', () => {
    expect(batchingFor({ writeConcurrency: 20 })).toEqual({ lingerMs: 0, concurrency: 4 });
    expect(batchingFor({ writeConcurrency: 2 })).toEqual({ lingerMs: 0, concurrency: 2 });
  });
});
