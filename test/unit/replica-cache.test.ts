import { describe, expect, it } from 'bun:test';
import { createReplicaCache } from '../../core/cache/replica-cache.ts';
import { manualClock } from '../helpers/clock.ts';

describe('createReplicaCache', () => {
  it('answers from memory while fresh, and loads again once the TTL has passed', async () => {
    const clock = manualClock();
    const cache = createReplicaCache<number>({ clock, ttlMs: 100 });
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('a', load)).toBe(1);
    expect(cache.get('a', load)).toBe(1);
    clock.advance(100);
    expect(await cache.get('a', load)).toBe(2);
  });

  it('never keeps a load that overlapped a write, and forgets the key after it, also on failure', async () => {
    const cache = createReplicaCache<string>({ clock: manualClock(), ttlMs: 1000 });
    let release: () => void = () => {};
    const slow = cache.get('a', () => new Promise<string>((r) => (release = () => r('old'))));
    await cache.write('a', async () => {});
    release();
    expect(await slow).toBe('old');
    expect(await cache.get('a', async () => 'new')).toBe('new');
    await expect(
      cache.write('a', async () => {
        throw new Error('lost');
      }),
    ).rejects.toThrow('lost');
    expect(await cache.get('a', async () => 'read again')).toBe('read again');
  });

  it('forgets every key on a write to all, and starts again empty past its size', async () => {
    const cache = createReplicaCache<number>({ clock: manualClock(), ttlMs: 1000, max: 2 });
    await cache.get('a', async () => 1);
    await cache.get('b', async () => 2);
    await cache.write(null, async () => {});
    expect(await cache.get('a', async () => 10)).toBe(10);
    await cache.get('b', async () => 20);
    await cache.get('c', async () => 30);
    expect(await cache.get('a', async () => 11)).toBe(11);
  });
});
