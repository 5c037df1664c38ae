import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, isMemoryDataDir, splitMasterKeyEntry } from './config.ts';
import type { Logger } from './log.ts';

/**
 * MASTER_KEY entries from the configuration; outside production on the embedded database, when none is
 * set, a key generated once into DATA_DIR/master.key (or kept in memory for an in-memory database), with
 * a warning. A data directory that already holds a database but no master.key is refused: its secrets
 * need their key. Postgres never gets a generated key: replicas must share theirs.
 */
export function resolveMasterKeyEntries(config: Config, log: Logger): string[] {
  if (config.masterKey) {
    refuseForgottenKeyFile(config);
    return config.masterKey;
  }
  if (config.env === 'production') throw new Error('MASTER_KEY is required when NODE_ENV=production');
  // Each replica would generate a key of its own and answer 500 for what another sealed.
  if (config.databaseUrl) throw new Error('MASTER_KEY is required when DATABASE_URL is set');
  const fresh = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  if (isMemoryDataDir(config.dataDir)) {
    log.warn('MASTER_KEY is not set: using a throw-away key for this in-memory database');
    return [fresh()];
  }
  const file = join(config.dataDir, 'master.key');
  if (existsSync(file)) return [readFileSync(file, 'utf8').trim()];
  // A new key cannot open what an earlier one sealed: refuse rather than start with unreadable secrets.
  if (existsSync(join(config.dataDir, 'pglite')))
    throw new Error(
      `MASTER_KEY is not set and ${file} is missing, but ${config.dataDir} already holds a database whose ` +
        'secrets were sealed with a key: restore master.key into DATA_DIR or set MASTER_KEY to that key',
    );
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(file, `${fresh()}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  log.warn('MASTER_KEY is not set: generated one into DATA_DIR/master.key; set MASTER_KEY in production', {
    file,
  });
  return [readFileSync(file, 'utf8').trim()];
}

/** The 32 key bytes of a MASTER_KEY entry or of master.key, for comparing keys however they are spelled. */
const keyBytes = (entry: string) => Buffer.from(splitMasterKeyEntry(entry).key, 'base64').toString('hex');

/**
 * MASTER_KEY set beside a DATA_DIR/master.key it does not list: the embedded database's secrets were
 * sealed with the file's key, so starting would leave them unreadable (500s on every read). Refused,
 * naming the way out: list the file's key after the new one (then `secrets reseal`), or remove the file.
 */
function refuseForgottenKeyFile(config: Config): void {
  if (config.databaseUrl || isMemoryDataDir(config.dataDir)) return;
  const file = join(config.dataDir, 'master.key');
  if (!existsSync(file)) return;
  const kept = keyBytes(readFileSync(file, 'utf8').trim());
  if ((config.masterKey ?? []).some((entry) => keyBytes(entry) === kept)) return;
  throw new Error(
    `MASTER_KEY does not list the key in ${file}, which sealed the secrets of this embedded database: ` +
      "list it after the new key, as it is in the file, with no id (MASTER_KEY=new:<key>,<the file's key>) " +
      'and run `secrets reseal`, ' +
      'or remove the file if that data is to be abandoned',
  );
}
