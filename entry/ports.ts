import { join } from 'node:path';
import { systemClock } from '../adapters/clock/system.ts';
import { createFetchDelivery, createGuardedFetch } from '../adapters/fetch-delivery/index.ts';
import { migrations as localKeysMigrations } from '../adapters/local-keys/migrations/index.ts';
import { createAesGcmSecretBox, parseMasterKeys } from '../adapters/local-keys/secret-box.ts';
import { createLocalKeysSigner, signingKeysSealed } from '../adapters/local-keys/signer.ts';
import { createJetStreamBus, natsOutboxMigrations } from '../adapters/nats/index.ts';
import { createDevOutbox, createSmtpMessenger } from '../adapters/nodemailer/index.ts';
import { createPgQueueBus, pgQueueMigrations } from '../adapters/pg-queue/index.ts';
import { createPgliteStorage } from '../adapters/pglite/index.ts';
import { acquireDataDirLock } from '../adapters/pglite/lock.ts';
import { createPostgresStorage } from '../adapters/postgres/index.ts';
import { type Config, isMemoryDataDir } from '../core/config.ts';
import type { Logger } from '../core/log.ts';
import { resolveMasterKeyEntries } from '../core/master-key.ts';
import type { Clock } from '../core/ports/clock.ts';
import type { Messenger } from '../core/ports/messenger.ts';
import type { Storage } from '../core/ports/storage.ts';
import type { Ports } from '../core/service.ts';

export interface PortOverrides {
  /** Use this storage instead of the configured one (tests pass a pre-initialised PGlite). */
  storage?: Storage;
  clock?: Clock;
  /** Use this transport for messages instead of SMTP_URL's or the development outbox. */
  messenger?: Messenger;
  /** Who holds the embedded database lock: shown to a second process that finds it taken. */
  purpose?: string;
}

/** Binds each port to the adapter the configuration selects. */
export async function createPorts(
  config: Config,
  log: Logger,
  overrides: PortOverrides = {},
): Promise<Ports> {
  const clock = overrides.clock ?? systemClock;
  const releases: Array<() => Promise<void> | void> = [];
  // The master key before the embedded database: a generated key must exist before the database it seals.
  const masterKeys = await parseMasterKeys(resolveMasterKeyEntries(config, log));
  let storage = overrides.storage;
  if (!storage) {
    if (config.databaseUrl) {
      storage = await createPostgresStorage({
        url: config.databaseUrl,
        ...(config.databaseSchema ? { schema: config.databaseSchema } : {}),
      });
    } else if (isMemoryDataDir(config.dataDir)) {
      storage = await createPgliteStorage();
    } else {
      const lock = acquireDataDirLock(config.dataDir, {
        purpose: overrides.purpose ?? 'server',
        port: config.port,
      });
      releases.push(lock.release);
      try {
        storage = await createPgliteStorage({ dataDir: join(config.dataDir, 'pglite') });
      } catch (e) {
        lock.release();
        throw e;
      }
    }
  }
  const secrets = await createAesGcmSecretBox(masterKeys);
  const signer = createLocalKeysSigner({ storage, secrets, clock });
  const busLog = log.child({ component: 'bus' });
  const bus = config.natsUrls
    ? await createJetStreamBus({
        servers: config.natsUrls,
        streamPrefix: config.natsStreamPrefix,
        storage,
        clock,
        log: busLog,
      })
    : createPgQueueBus({ storage, clock, log: busLog });
  const delivery = createFetchDelivery({
    allowPrivate: config.deliveryAllowPrivate,
    hostMap: config.deliveryHostMap,
    extraCaPem: config.extraCaPem,
    log: log.child({ component: 'delivery' }),
  });
  // SSO providers are addresses a tenant chooses, as webhook URLs are: the same guard, its own allowance.
  const sso = createGuardedFetch({
    allowPrivate: config.ssoAllowPrivate,
    setting: 'SSO_ALLOW_PRIVATE',
    purpose: 'SSO provider',
    hostMap: config.deliveryHostMap,
    extraCaPem: config.extraCaPem,
    log: log.child({ component: 'sso-outbound' }),
  });
  // Clients' key sets (private_key_jwt) are addresses a tenant chooses too: the same guard, its own allowance.
  const clientJwks = createGuardedFetch({
    allowPrivate: config.clientJwksAllowPrivate,
    setting: 'CLIENT_JWKS_ALLOW_PRIVATE',
    purpose: 'OAuth client key set',
    hostMap: config.deliveryHostMap,
    extraCaPem: config.extraCaPem,
    log: log.child({ component: 'client-jwks-outbound' }),
    // A key set is small; a client's token request waits for it.
    timeoutMs: 5000,
    maxResponseBytes: 65_536,
  });
  const messenger = overrides.messenger ?? createMessenger(config, log.child({ component: 'mail' }));
  return {
    storage,
    bus,
    signer,
    secrets,
    delivery,
    outbound: {
      sso: sso.fetch,
      clientJwks: clientJwks.fetch,
      close: async () => {
        await Promise.all([sso.close(), clientJwks.close()]);
      },
    },
    clock,
    messenger,
    migrations: [localKeysMigrations, config.natsUrls ? natsOutboxMigrations : pgQueueMigrations],
    sealed: [signingKeysSealed],
    release: async () => {
      for (const r of releases) await r();
    },
  };
}

/**
 * SMTP when SMTP_URL is set; otherwise the development outbox (DATA_DIR/outbox, or memory), which
 * production allows only with MAIL_OUTBOX=true.
 */
function createMessenger(config: Config, log: Logger): Messenger {
  if (config.smtpUrl)
    return createSmtpMessenger({
      url: config.smtpUrl,
      from: config.mailFrom,
      extraCaPem: config.extraCaPem,
      log,
    });
  // Production reaches here only with MAIL_OUTBOX=true (the configuration refuses it otherwise).
  if (config.env === 'production')
    log.warn(
      'MAIL_OUTBOX=true: messages (password reset and verification links) stay in the development outbox, and reach nobody',
    );
  return createDevOutbox({
    dir: isMemoryDataDir(config.dataDir) ? undefined : join(config.dataDir, 'outbox'),
    from: config.mailFrom,
    log,
  });
}
