import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { currentProcessLife, isRunning, type ProcessLife } from './process-life.ts';

/** What DATA_DIR/.lock records: the holding process, what it is, and a nonce that makes each lock unique. */
export interface LockHolder extends ProcessLife {
  purpose: string;
  port?: number;
  started_at: string;
  id?: string;
}

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    super(
      `the embedded database in ${dataDir} is in use by another process (pid ${holder.pid}, ${holder.purpose}${holder.port ? ` on port ${holder.port}` : ''}). ` +
        'PGlite admits one process at a time: stop that process first, or point both at Postgres with DATABASE_URL.',
    );
    this.name = 'DataDirLockedError';
  }
}

/**
 * Takes DATA_DIR/.lock for this process. PGlite has no lock of its own and two processes on one data
 * directory would corrupt it, so a second process gets a clear error instead. The lock lives as long as
 * the process: it records the pid with the process's start time and the boot it ran in, so a lock left
 * by a process killed with SIGKILL (even one its parent has not reaped yet), or by an earlier boot, is
 * taken over at once, and a pid given again to another process does not pass for the holder.
 *
 * The lock appears whole or not at all (written aside, then hard-linked into place), so no process can
 * read it half-written and take it for a dead one's. Taking over a dead one's happens under a second,
 * short lock (`.lock.takeover`), and only if the file still holds what was judged dead, so two
 * processes taking over at once never remove each other's new lock.
 */
export function acquireDataDirLock(
  dataDir: string,
  info: { purpose: string; port?: number },
): { release: () => void } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, '.lock');
  const me: LockHolder = {
    ...currentProcessLife(),
    purpose: info.purpose,
    ...(info.port ? { port: info.port } : {}),
    started_at: new Date().toISOString(),
    id: crypto.randomUUID(),
  };
  const mine = JSON.stringify(me);
  const aside = `${file}.${process.pid}.${me.id}`;
  writeFileSync(aside, mine, { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        linkSync(aside, file);
        let released = false;
        return {
          release: () => {
            if (released) return;
            released = true;
            // Only our own: a lock taken over from us (we were judged dead) is another's now.
            if (readText(file) === mine) rmSync(file, { force: true });
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const text = readText(file);
        if (text === undefined) continue;
        const holder = parseHolder(text);
        if (holder && holder.pid !== process.pid && isRunning(holder))
          throw new DataDirLockedError(dataDir, holder);
        // Another process is taking a dead one's lock over: wait for it, then look again.
        if (!removeIfUnchanged(file, text)) sleepSync(5 + Math.random() * 15);
      }
    }
    throw new Error(`could not take the lock ${file}: other processes kept taking it; try again`);
  } finally {
    rmSync(aside, { force: true });
  }
}

/** A takeover lock older than this was left by a process that died while taking over: removed. */
const TAKEOVER_STALE_MS = 10_000;

/** Blocks this thread: the lock is taken once, at start-up, before anything else runs. */
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Removes `file` if it still holds `text`, under `<file>.takeover` so no two processes do it at once.
 * False when another process holds the takeover lock.
 */
function removeIfUnchanged(file: string, text: string): boolean {
  const takeover = `${file}.takeover`;
  try {
    writeFileSync(takeover, JSON.stringify(currentProcessLife()), { flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // Left by a process that died while taking over (a window of microseconds): removed.
    const taker = parseHolder(readText(takeover) ?? '');
    if ((taker && !isRunning(taker)) || ageMs(takeover) > TAKEOVER_STALE_MS)
      rmSync(takeover, { force: true });
    return false;
  }
  try {
    if (readText(file) === text) rmSync(file, { force: true });
  } finally {
    rmSync(takeover, { force: true });
  }
  return true;
}

const ageMs = (path: string): number => {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

function parseHolder(text: string): LockHolder | null {
  try {
    const holder = JSON.parse(text) as LockHolder;
    return typeof holder === 'object' && holder !== null && typeof holder.pid === 'number' ? holder : null;
  } catch {
    return null;
  }
}

/** The process holding DATA_DIR/.lock, or null when none runs. */
export const readLockHolder = (dataDir: string): LockHolder | null => {
  const text = readText(join(dataDir, '.lock'));
  const holder = text === undefined ? null : parseHolder(text);
  return holder && isRunning(holder) ? holder : null;
};
