/**
 * CPU time of processes and of the machine, read from /proc (Linux; elsewhere every figure is NaN): what
 * each process of a benchmark row used while it ran, in percent of one core.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc's CPU times, 100 on every Linux the benchmarks run on. */
const TICKS_PER_SECOND = 100;

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** User and system CPU seconds a process has used; undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  const stat = read(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  // After the command name (in parentheses, may hold spaces) come the fields from the 3rd: utime is the 14th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The processes whose command name is `comm` (postgres, nats-server), and their command lines. */
export function processesNamed(comm: string): Array<{ pid: number; args: string[] }> {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: Array<{ pid: number; args: string[] }> = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || read(`/proc/${entry}/comm`)?.trim() !== comm) continue;
    found.push({ pid: Number(entry), args: (read(`/proc/${entry}/cmdline`) ?? '').split('\0') });
  }
  return found;
}

/** The direct children of a process. */
export const childrenOf = (pid: number): number[] =>
  (read(`/proc/${pid}/task/${pid}/children`) ?? '').split(' ').filter(Boolean).map(Number);

/** Busy and total CPU seconds of the whole machine, all cores. */
function machine(): { busy: number; total: number } {
  const line = read('/proc/stat')?.split('\n')[0] ?? '';
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const ticks = line.split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/**
 * Seconds a process's main thread has waited, runnable, for a core (the scheduler's run queue): time it
 * wanted to run and could not, because other processes had the cores.
 */
export function runQueueSeconds(pid: number): number | undefined {
  const schedstat = read(`/proc/${pid}/schedstat`);
  return schedstat ? Number(schedstat.split(' ')[1]) / 1e9 : undefined;
}

/** What a group of processes used during a measurement, in percent of one core over its wall time. */
export interface GroupCpu {
  /** CPU time, every thread. */
  cpu: number;
  /** Time the main threads waited in the run queue for a core. */
  waited: number;
}

/**
 * Starts measuring; the function returned gives each group's CPU since, and the machine's busy share in
 * percent of all its cores. A group's pids are asked for at the start and at the end, so processes born
 * during the run (a database backend) count from zero.
 */
export function cpuMeter(groups: Record<string, () => number[]>) {
  const sample = (pid: number) => ({ cpu: cpuSeconds(pid), waited: runQueueSeconds(pid) });
  const before = new Map<number, ReturnType<typeof sample>>();
  const startPids = new Map<string, number[]>();
  for (const [name, pids] of Object.entries(groups)) {
    startPids.set(name, pids());
    for (const pid of startPids.get(name)!) before.set(pid, sample(pid));
  }
  const m0 = machine();
  const t0 = performance.now();
  return (): { groups: Record<string, GroupCpu>; machine: number } => {
    const seconds = (performance.now() - t0) / 1000;
    const m1 = machine();
    const percent = (used: number) => (seconds > 0 ? (used / seconds) * 100 : Number.NaN);
    const result: Record<string, GroupCpu> = {};
    for (const [name, pids] of Object.entries(groups)) {
      let cpu = 0;
      let waited = 0;
      for (const pid of new Set([...startPids.get(name)!, ...pids()])) {
        const now = sample(pid);
        const then = before.get(pid);
        if (now.cpu !== undefined) cpu += now.cpu - (then?.cpu ?? 0);
        if (now.waited !== undefined) waited += now.waited - (then?.waited ?? 0);
      }
      result[name] = { cpu: percent(cpu), waited: percent(waited) };
    }
    const total = m1.total - m0.total;
    return { groups: result, machine: total > 0 ? ((m1.busy - m0.busy) / total) * 100 : Number.NaN };
  };
}
