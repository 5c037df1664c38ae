import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../core/log.ts';

/** This process was started by the supervisor: it shares the port with its siblings. */
export const isWorkerProcess = (): boolean => cluster.isWorker;

/** The worker's number (0, 1, …) for its log lines; undefined in the supervisor or a single process. */
export const workerIndex = (): number | undefined =>
  cluster.isWorker ? Number(process.env.WORKER_INDEX ?? cluster.worker?.id ?? 0) : undefined;

/** A worker tells the supervisor it listens: from then on a crash is restarted, not a failed start. */
export function reportListening(): void {
  if (cluster.isWorker) process.send?.({ type: 'listening' });
}

export interface SuperviseOptions {
  workers: number;
  log: Logger;
  /** Restarts allowed in `restartWindowMs` before the supervisor gives up. @default 5 */
  maxRestarts?: number;
  /** @default 60000 */
  restartWindowMs?: number;
  /** A crashed worker is started again after this long. @default 1000 */
  restartDelayMs?: number;
}

/**
 * Runs `workers` copies of this entry, each a whole server (HTTP API and delivery pipeline, a replica
 * on the same Postgres and bus) on the same port: SO_REUSEPORT on Bun, the cluster's shared handle on
 * Node. The supervisor serves nothing itself. A worker that crashes after it listened is started again
 * (at most `maxRestarts` a minute); one that fails before it listened stops them all, since its siblings
 * would fail alike (a bad setting, the database down). SIGINT or SIGTERM stops every worker gracefully;
 * a second signal kills them.
 */
export function superviseWorkers(options: SuperviseOptions): Promise<never> {
  const { workers, log } = options;
  const maxRestarts = options.maxRestarts ?? 5;
  const windowMs = options.restartWindowMs ?? 60_000;
  const delayMs = options.restartDelayMs ?? 1000;
  const listening = new Set<Worker>();
  const indexOf = new Map<Worker, number>();
  const restarts: number[] = [];
  let stopping = false;
  let failed = false;

  const start = (index: number) => {
    const worker = cluster.fork({ WORKER_INDEX: String(index) });
    indexOf.set(worker, index);
    worker.on('message', (m: { type?: string }) => {
      if (m?.type === 'listening') listening.add(worker);
    });
  };
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const stopAll = (signal: NodeJS.Signals) => {
    for (const w of live()) w.process.kill(signal);
  };

  return new Promise<never>(() => {
    cluster.on('exit', (worker, code, signal) => {
      const index = indexOf.get(worker) ?? 0;
      const wasListening = listening.delete(worker);
      indexOf.delete(worker);
      if (stopping) {
        if (code !== 0) failed = true;
        if (live().length === 0) {
          log.info('stopped', { workers });
          process.exit(failed ? 1 : 0);
        }
        return;
      }
      if (!wasListening) {
        log.error('a worker failed to start; stopping the others', { worker: index, code, signal });
        stopping = true;
        failed = true;
        stopAll('SIGTERM');
        if (live().length === 0) process.exit(1);
        return;
      }
      const now = Date.now();
      while (restarts.length && now - restarts[0]! > windowMs) restarts.shift();
      if (restarts.length >= maxRestarts) {
        log.error('workers keep crashing; stopping', {
          worker: index,
          code,
          signal,
          restarts: restarts.length,
        });
        stopping = true;
        failed = true;
        stopAll('SIGTERM');
        if (live().length === 0) process.exit(1);
        return;
      }
      restarts.push(now);
      log.error('a worker exited; starting another in its place', {
        worker: index,
        code,
        signal,
        delay_ms: delayMs,
      });
      setTimeout(() => {
        if (!stopping) start(index);
      }, delayMs);
    });
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn('second signal: killing the workers', { signal });
        stopAll('SIGKILL');
        process.exit(1);
      }
      stopping = true;
      log.info('shutting down the workers', { signal, workers: live().length });
      stopAll('SIGTERM');
      if (live().length === 0) process.exit(0);
    };
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    log.info('starting workers', { workers });
    for (let i = 0; i < workers; i++) start(i);
  });
}
