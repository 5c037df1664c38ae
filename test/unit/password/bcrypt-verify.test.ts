import { describe, expect, it } from 'bun:test';
import { hashSync as bcryptHash } from '@node-rs/bcrypt';
import { createHasher } from '../../../plugins/password/hashing/hashing.ts';

const hasher = createHasher({ memoryKiB: 4096, iterations: 1, parallelism: 1 });

describe('verifying an imported bcrypt hash', () => {
  it('matches $2a$, $2b$ and $2y$ hashes, and refuses a wrong password', async () => {
    const made = bcryptHash('correct horse battery staple', 4);
    for (const prefix of ['$2a$', '$2b$', '$2y$']) {
      const encoded = made.replace(/^\$2b\$/, prefix);
      expect(await hasher.verify(encoded, 'correct horse battery staple')).toBe(true);
      expect(await hasher.verify(encoded, 'correct horse battery stapler')).toBe(false);
    }
  });

  it('reads the first 72 bytes of a longer password, as bcrypt made the hash', async () => {
    // 30 three-byte characters: 90 bytes, cut at 72 as every bcrypt cuts them.
    const long = '€'.repeat(30);
    const encoded = bcryptHash(long, 4);
    expect(await hasher.verify(encoded, long)).toBe(true);
    expect(await hasher.verify(encoded, `${'€'.repeat(24)}and then something else`)).toBe(true);
    expect(await hasher.verify(encoded, '€'.repeat(23))).toBe(false);
  });

  it('leaves the event loop turning while costly hashes are verified', async () => {
    // Cost 11: about 150 ms each here. Four at once held the thread for the whole time with bcryptjs
    // (pure JavaScript, in slices on the event loop's thread), which verified them before.
    const encoded = bcryptHash('the right one', 11);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 4 }, () => hasher.verify(encoded, 'wrong')));
    const elapsed = performance.now() - started;
    clearInterval(timer);
    expect(results).toEqual([false, false, false, false]);
    // A timer every 5 ms: a sixth of the ticks the time allowed at least, where a held thread gets one.
    const turning = ticks > elapsed / 5 / 6;
    expect(turning ? 'turning' : `held: ${ticks} ticks in ${Math.round(elapsed)} ms`).toBe('turning');
  });
});
