import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { type Config, isMemoryDataDir } from '../core/config.ts';

/**
 * What a start is about to do that takes seconds, said on standard error as it happens (standard output
 * carries only JSON log lines): a first start is otherwise silent for 7 to 17 s.
 */
export interface StartSteps {
  /** The embedded database does not exist yet: it is created, then migrated from empty. */
  freshDatabase: boolean;
  /** No MASTER_KEY and no DATA_DIR/master.key: one is generated. */
  newMasterKey: boolean;
  say(step: string): void;
}

/** Reads, before anything is created, what this start will have to make. */
export function startSteps(config: Config, print: (text: string) => void = console.error): StartSteps {
  const onDisk = !config.databaseUrl && !isMemoryDataDir(config.dataDir);
  return {
    freshDatabase: onDisk && !existsSync(join(config.dataDir, 'pglite')),
    newMasterKey:
      !config.masterKey &&
      config.env !== 'production' &&
      !isMemoryDataDir(config.dataDir) &&
      !existsSync(join(config.dataDir, 'master.key')),
    say: (step) => print(`[start] ${step}`),
  };
}

/**
 * Fails fast when HOST:PORT is taken, before a data directory, key or database is made for a server
 * that could not run. A port freed in between is harmless; one taken in between still fails at listen.
 */
export function checkPortFree(host: string, port: number, variable = 'PORT'): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e: Error & { code?: string }) =>
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `cannot listen on ${host}:${port}: the port is in use (set ${variable} or stop the other server)`
            : `cannot listen on ${host}:${port}: ${e.message}`,
        ),
      ),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
