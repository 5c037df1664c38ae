import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LockHolder {
  pid: number;
  purpose: string;
  port?: number;
  started_at: string;
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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes DATA_DIR/.lock for this process. PGlite has no lock of its own and two processes on one data
 * directory would corrupt it, so a second process gets a clear error instead. A lock left by a dead
 * process is taken over. The lock appears whole or not at all (written aside, then hard-linked into
 * place), so no process can read it half-written and take it for a dead one's.
 */
export function acquireDataDirLock(
  dataDir: string,
  info: { purpose: string; port?: number },
): { release: () => void } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, '.lock');
  const me: LockHolder = {
    pid: process.pid,
    purpose: info.purpose,
    ...(info.port ? { port: info.port } : {}),
    started_at: new Date().toISOString(),
  };
  const aside = `${file}.${process.pid}.${crypto.randomUUID()}`;
  writeFileSync(aside, JSON.stringify(me), { flag: 'wx' });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(aside, file);
        let released = false;
        return {
          release: () => {
            if (released) return;
            released = true;
            rmSync(file, { force: true });
          },
        };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        let holder: LockHolder | null = null;
        try {
          holder = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
        } catch {
          holder = null;
        }
        if (holder && holder.pid !== process.pid && alive(holder.pid))
          throw new DataDirLockedError(dataDir, holder);
        rmSync(file, { force: true });
      }
    }
    throw new Error(`could not take the lock ${file}`);
  } finally {
    rmSync(aside, { force: true });
  }
}

export const readLockHolder = (dataDir: string): LockHolder | null => {
  try {
    const holder = JSON.parse(readFileSync(join(dataDir, '.lock'), 'utf8')) as LockHolder;
    return alive(holder.pid) ? holder : null;
  } catch {
    return null;
  }
};
