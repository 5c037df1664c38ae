import { readFileSync } from 'node:fs';

/**
 * What names one run of a process on this machine: its pid, and where /proc exists, the kernel's boot
 * id and the process's start time (clock ticks after boot), so a pid the kernel gave again to another
 * process, or a pid of an earlier boot, is not taken for the same process.
 */
export interface ProcessLife {
  pid: number;
  /** Field 22 of /proc/<pid>/stat; absent where there is no /proc. */
  start?: string;
  /** /proc/sys/kernel/random/boot_id; absent where there is no /proc. */
  boot?: string;
}

interface ProcStat {
  state: string;
  start: string;
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** State and start time of a process from /proc, or undefined when it has no entry there. */
function procStat(pid: number): ProcStat | undefined {
  const text = readText(`/proc/${pid}/stat`);
  if (text === undefined) return undefined;
  // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so fields count from the last `)`.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: fields[19] ?? '' };
}

const HAS_PROC = procStat(process.pid) !== undefined;
const BOOT = HAS_PROC ? readText('/proc/sys/kernel/random/boot_id')?.trim() : undefined;

/** This process, as a lock records it. */
export function currentProcessLife(): ProcessLife {
  const start = HAS_PROC ? procStat(process.pid)?.start : undefined;
  return { pid: process.pid, ...(start ? { start } : {}), ...(BOOT ? { boot: BOOT } : {}) };
}

/** Signal 0 checks that a pid exists; EPERM means it exists under another user. */
const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Whether the process a lock names still runs. With /proc: not after a reboot (another boot id), not
 * when its pid is gone, not as a zombie (killed, not yet reaped by its parent: signal 0 still reaches
 * it), and not when the pid now belongs to a process started at another time. Without /proc (macOS,
 * Windows): whether the pid exists, which a recycled pid or an unreaped zombie can fool into "yes";
 * the error then names the pid, so the operator can see it is not the server.
 */
export function isRunning(life: ProcessLife): boolean {
  if (!Number.isSafeInteger(life.pid) || life.pid <= 0) return false;
  if (!HAS_PROC) return pidExists(life.pid);
  if (life.boot && BOOT && life.boot !== BOOT) return false;
  const stat = procStat(life.pid);
  if (!stat) return false;
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  return life.start === undefined || life.start === stat.start;
}

/** True when /proc tells process lives apart (Linux); tests of recycled pids need it. */
export const tellsProcessesApart = HAS_PROC;
