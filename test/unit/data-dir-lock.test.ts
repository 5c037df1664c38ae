import { describe, expect, it } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, readLockHolder } from '../../adapters/pglite/lock.ts';

const LOCK = join(import.meta.dir, '..', '..', 'adapters/pglite/lock.ts');

/** A process that tries the lock, says whether it got it, and holds it for `holdMs`. */
const contender = (dir: string, holdMs: number) =>
  Bun.spawn(
    [
      process.execPath,
      '-e',
      `const { acquireDataDirLock } = await import(${JSON.stringify(LOCK)});
       try { const l = acquireDataDirLock(${JSON.stringify(dir)}, { purpose: 'test' }); console.log('got');
             await Bun.sleep(${holdMs}); l.release(); }
       catch (e) { console.log(e.name); }`,
    ],
    { stdout: 'pipe' },
  );

describe('the data directory lock', () => {
  it('is held by exactly one of many processes starting at once, and leaves no files behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-lock-'));
    try {
      for (let round = 0; round < 3; round++) {
        const procs = Array.from({ length: 6 }, () => contender(dir, 1500));
        const said = await Promise.all(procs.map(async (p) => (await new Response(p.stdout).text()).trim()));
        expect(said.filter((s) => s === 'got')).toHaveLength(1);
        expect(said.filter((s) => s === 'DataDirLockedError')).toHaveLength(5);
        expect(readdirSync(dir)).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("is taken over by exactly one of many processes starting at once over a dead one's lock", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-lock-'));
    try {
      for (let round = 0; round < 3; round++) {
        writeFileSync(
          join(dir, '.lock'),
          JSON.stringify({ pid: 2 ** 22 + 7, purpose: 'gone', started_at: '' }),
        );
        const procs = Array.from({ length: 6 }, () => contender(dir, 1500));
        const said = await Promise.all(procs.map(async (p) => (await new Response(p.stdout).text()).trim()));
        expect(said.filter((s) => s === 'got')).toHaveLength(1);
        expect(said.filter((s) => s === 'DataDirLockedError')).toHaveLength(5);
        expect(readdirSync(dir)).toEqual([]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('takes over a lock left by a dead process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-lock-'));
    try {
      writeFileSync(
        join(dir, '.lock'),
        JSON.stringify({ pid: 2 ** 22 + 7, purpose: 'gone', started_at: '' }),
      );
      expect(readLockHolder(dir)).toBeNull();
      const lock = acquireDataDirLock(dir, { purpose: 'test' });
      expect(readLockHolder(dir)?.pid).toBe(process.pid);
      lock.release();
      expect(existsSync(join(dir, '.lock'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
