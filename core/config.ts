import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import ipaddr from 'ipaddr.js';
import * as v from 'valibot';
import { isTooWideAllowance, WIDEST_ALLOWANCE } from './net/address.ts';

/** Reads the process environment once; everything else receives the resulting `Config`. */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

/** Variables whose value is a secret, or may carry one: never echoed whole in a message. */
const SECRET = new Set(['MASTER_KEY']);
const WITH_CREDENTIALS = new Set(['DATABASE_URL', 'NATS_URL', 'PUBLIC_BASE_URL', 'SMTP_URL']);

/** A wrong value as a message may show it: secrets not at all, URLs without their credentials. */
function shownValue(name: string, value: unknown): string {
  if (SECRET.has(name)) return 'the value is not shown: it is a secret';
  const text = String(value);
  const masked = WITH_CREDENTIALS.has(name) ? text.replace(/\/\/[^/@\s]*@/g, '//***@') : text;
  return `got ${JSON.stringify(masked.length > 200 ? `${masked.slice(0, 200)}…` : masked)}`;
}

const str = (name: string, rule: string, ok: (s: string) => boolean) =>
  v.pipe(
    v.string(),
    v.check(
      (s) => ok(s),
      (i) => `${name} ${rule} (${shownValue(name, i.input)})`,
    ),
  );

const isInt = (lo: number, hi: number) => (s: string) =>
  /^\d+$/.test(s) && Number(s) >= lo && Number(s) <= hi;
const isUrl = (protocols: string[]) => (s: string) => {
  try {
    return protocols.includes(new URL(s).protocol);
  } catch {
    return false;
  }
};
const isCidr = (s: string) => {
  try {
    ipaddr.parseCIDR(s.trim());
    return true;
  } catch {
    return false;
  }
};
const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

const EnvSchema = v.object({
  NODE_ENV: v.optional(
    v.picklist(
      ['development', 'production', 'test'],
      (i) => `NODE_ENV must be development, production or test (got ${JSON.stringify(i.input)})`,
    ),
    'development',
  ),
  PORT: v.optional(str('PORT', 'must be an integer from 0 to 65535', isInt(0, 65535)), '3000'),
  WORKERS: v.optional(
    str('WORKERS', 'must be auto or an integer from 1 to 64', (s) => s === 'auto' || isInt(1, 64)(s)),
    '1',
  ),
  HOST: v.optional(str('HOST', 'must be a host name or IP address', (s) => /^[A-Za-z0-9.:-]+$/.test(s))),
  PUBLIC_BASE_URL: v.optional(
    str(
      'PUBLIC_BASE_URL',
      'must be an http(s) URL without credentials, query or fragment',
      (s) => isUrl(['http:', 'https:'])(s) && !/[?#]/.test(s) && !/^[a-z]+:\/\/[^/]*@/i.test(s),
    ),
  ),
  DATA_DIR: v.optional(
    str('DATA_DIR', 'must be a directory path or memory://', (s) => s.length > 0),
    './data',
  ),
  DATABASE_URL: v.optional(
    str('DATABASE_URL', 'must be a postgres:// or postgresql:// URL', isUrl(['postgres:', 'postgresql:'])),
  ),
  DATABASE_SCHEMA: v.optional(
    str('DATABASE_SCHEMA', 'must be a lower-case SQL identifier', (s) => /^[a-z_][a-z0-9_]{0,62}$/.test(s)),
  ),
  NATS_URL: v.optional(
    str(
      'NATS_URL',
      'must be a comma-separated list of nats:// URLs',
      (s) => list(s).length > 0 && list(s).every(isUrl(['nats:', 'tls:'])),
    ),
  ),
  NATS_STREAM_PREFIX: v.optional(
    str('NATS_STREAM_PREFIX', 'must be letters, digits and _ (at most 32)', (s) =>
      /^[A-Za-z0-9_]{1,32}$/.test(s),
    ),
    'IDS',
  ),
  MASTER_KEY: v.optional(
    str(
      'MASTER_KEY',
      'must be a comma-separated list of [kid:]base64 keys of 32 bytes each',
      (s) => list(s).length > 0 && list(s).every(isMasterKey),
    ),
  ),
  HEADER_PREFIX: v.optional(
    str('HEADER_PREFIX', 'must be letters, digits and - (at most 32)', (s) => /^[A-Za-z0-9-]{1,32}$/.test(s)),
    'Service',
  ),
  SERVICE_CONFIG: v.optional(
    str(
      'SERVICE_CONFIG',
      'must be the path of a .ts or .js file that default-exports defineService(...)',
      (s) => /\.(m?[jt]s)$/.test(s),
    ),
  ),
  PLUGINS: v.optional(
    str('PLUGINS', 'must be a comma-separated list of plugin ids', (s) =>
      list(s).every((x) => /^[a-z0-9-]+$/.test(x)),
    ),
  ),
  LOG_LEVEL: v.optional(
    v.picklist(
      LEVELS,
      (i) => `LOG_LEVEL must be one of ${LEVELS.join(', ')} (got ${JSON.stringify(i.input)})`,
    ),
    'info',
  ),
  BODY_LIMIT: v.optional(
    str('BODY_LIMIT', 'must be a byte count from 1024 to 67108864', isInt(1024, 64 * 1024 * 1024)),
    String(1024 * 1024),
  ),
  REQUEST_TIMEOUT_MS: v.optional(
    str('REQUEST_TIMEOUT_MS', 'must be an integer from 1000 to 250000', isInt(1000, 250_000)),
    '10000',
  ),
  DELIVERY_ALLOW_PRIVATE: v.optional(
    str('DELIVERY_ALLOW_PRIVATE', 'must be a comma-separated list of CIDRs such as 127.0.0.0/8', (s) =>
      list(s).every(isCidr),
    ),
  ),
  DELIVERY_HOST_MAP: v.optional(
    str('DELIVERY_HOST_MAP', 'must be a comma-separated list of host=IP pairs', (s) =>
      list(s).every((p) => /^[A-Za-z0-9.-]+=[0-9A-Fa-f.:]+$/.test(p) && ipaddr.isValid(p.split('=')[1]!)),
    ),
  ),
  NODE_EXTRA_CA_CERTS: v.optional(v.string()),
  TRUSTED_PROXY_HOPS: v.optional(
    str('TRUSTED_PROXY_HOPS', 'must be an integer from 0 to 10', isInt(0, 10)),
    '0',
  ),
  SHUTDOWN_DRAIN_MS: v.optional(
    str('SHUTDOWN_DRAIN_MS', 'must be an integer from 0 to 600000', isInt(0, 600_000)),
    '0',
  ),
  SHUTDOWN_TIMEOUT_MS: v.optional(
    str('SHUTDOWN_TIMEOUT_MS', 'must be an integer from 1 to 600000', isInt(1, 600_000)),
    '10000',
  ),
  SMTP_URL: v.optional(
    str(
      'SMTP_URL',
      'must be an smtp:// (STARTTLS where offered) or smtps:// (TLS) URL with a host, such as smtp://user:pass@mail.example.com:587',
      (s) => isUrl(['smtp:', 'smtps:'])(s) && new URL(s).hostname !== '',
    ),
  ),
  MAIL_FROM: v.optional(
    str('MAIL_FROM', 'must be an email address such as no-reply@example.com', (s) =>
      /^[^\s@<>"]{1,64}@[A-Za-z0-9.-]{1,253}$/.test(s),
    ),
  ),
  MAIL_TEMPLATES_DIR: v.optional(str('MAIL_TEMPLATES_DIR', 'must be a directory path', (s) => s.length > 0)),
  MAIL_RETRY_WINDOW_MINUTES: v.optional(
    str('MAIL_RETRY_WINDOW_MINUTES', 'must be an integer from 1 to 1440', isInt(1, 1440)),
    '60',
  ),
  METRICS_PORT: v.optional(
    str(
      'METRICS_PORT',
      'must be an integer from 0 to 65535 (0: a free port, logged at start)',
      isInt(0, 65535),
    ),
  ),
  METRICS_HOST: v.optional(
    str('METRICS_HOST', 'must be a host name or IP address', (s) => /^[A-Za-z0-9.:-]+$/.test(s)),
  ),
  REGION: v.optional(
    str('REGION', 'must be a region name of 1 to 64 lower-case letters, digits and -', (s) =>
      /^[a-z0-9][a-z0-9-]{0,63}$/.test(s),
    ),
    'us-iowa',
  ),
});

/** A MASTER_KEY entry `[kid:]base64` split in two; `kid` is undefined when the entry names none. */
export function splitMasterKeyEntry(entry: string): { kid: string | undefined; key: string } {
  const colon = entry.indexOf(':');
  return colon >= 0
    ? { kid: entry.slice(0, colon), key: entry.slice(colon + 1) }
    : { kid: undefined, key: entry };
}

function isMasterKey(entry: string): boolean {
  const { kid = 'x', key } = splitMasterKeyEntry(entry);
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(kid)) return false;
  try {
    return atob(key.replaceAll('-', '+').replaceAll('_', '/')).length === 32;
  } catch {
    return false;
  }
}

/**
 * Why MASTER_KEY must be set, and how to make one. On Postgres every replica must open what another
 * sealed, so a key generated by each one (as the embedded database gets) would answer 500s.
 */
function masterKeyRequired(production: boolean): string {
  const why = production
    ? 'MASTER_KEY is required when NODE_ENV=production'
    : 'MASTER_KEY is required when DATABASE_URL is set: every replica must seal and open secrets with the same key';
  return (
    `${why}. Generate 32 random bytes as base64 with \`openssl rand -base64 32\` ` +
    `(or \`node -e "console.log(require('node:crypto').randomBytes(32).toString('base64'))"\`) ` +
    'and give every replica the same MASTER_KEY=<id>:<key>, such as MASTER_KEY=k1:<the generated key>'
  );
}

/**
 * The key ids MASTER_KEY lists more than once. An entry without an id gets one from its key, so the same
 * key listed twice that way is named only as such: no part of a key appears in a message.
 */
function repeatedKeyIds(entries: string[]): string[] {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const entry of entries) {
    const { kid, key } = splitMasterKeyEntry(entry);
    const id = kid === undefined ? `key:${key}` : `kid:${kid}`;
    if (seen.has(id)) twice.add(kid ?? 'a key without an id, listed twice');
    seen.add(id);
  }
  return [...twice];
}

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  /**
   * How many server processes share the port (WORKERS; `auto` is one per core): each runs the HTTP API and
   * the delivery pipeline as a replica would. Always 1 on the embedded database, which has one writer.
   */
  workers: number;
  publicBaseUrl: string;
  /** A directory for the embedded database and generated files, or `memory://` for none. */
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  natsUrls: string[] | undefined;
  natsStreamPrefix: string;
  /**
   * Raw MASTER_KEY entries, current first; undefined (only outside production, on the embedded database)
   * means "generate one in DATA_DIR".
   */
  masterKey: string[] | undefined;
  headerPrefix: string;
  /** SERVICE_CONFIG: the deployment file to load instead of the repository's service.config.ts. */
  serviceConfig: string | undefined;
  /** Plugin ids to enable; undefined means every plugin in service.config.ts. */
  plugins: string[] | undefined;
  logLevel: LogLevel;
  bodyLimit: number;
  /** How long a request body may take to arrive before the answer is 408. */
  requestTimeoutMs: number;
  /**
   * How many proxies in front append the address they saw to X-Forwarded-For; the client's address is
   * that many entries from the right. 0: the socket's peer address, never a header.
   */
  trustedProxyHops: number;
  deliveryAllowPrivate: string[];
  deliveryHostMap: Record<string, string>;
  /** PEM text of NODE_EXTRA_CA_CERTS, trusted by webhook deliveries in addition to the system roots. */
  extraCaPem: string | undefined;
  /** How long a shutdown answers /readyz 503 while still serving, before it stops accepting. */
  shutdownDrainMs: number;
  shutdownTimeoutMs: number;
  /** SMTP_URL: where messages go; undefined sends them to the development outbox under DATA_DIR/outbox. */
  smtpUrl: string | undefined;
  /** MAIL_FROM: the sender address of every message. @default no-reply@<PUBLIC_BASE_URL's host> */
  mailFrom: string;
  /** MAIL_TEMPLATES_DIR: a folder of message templates that replace the built-in ones. */
  mailTemplatesDir: string | undefined;
  /** How long a message the transport refuses is retried (MAIL_RETRY_WINDOW_MINUTES). */
  mailRetryWindowMs: number;
  /** The region that holds the deployment's data: the `region` of `_InRegion` events. @default 'us-iowa' */
  region: string;
  /**
   * METRICS_PORT: the port of a second listener that serves only GET /metrics (Prometheus text) and
   * /healthz; undefined turns metrics off (nothing is counted). 0 lets the system choose. With WORKERS,
   * worker i listens on METRICS_PORT + i.
   */
  metricsPort: number | undefined;
  /** METRICS_HOST: the address of the metrics listener. @default '127.0.0.1' */
  metricsHost: string;
  /** The environment as read, for plugins' own settings (each plugin's schema reads its variables). */
  environment: Readonly<Env>;
}

/** Validates the environment. Throws ConfigError naming every wrong variable and its rule. */
export function loadConfig(env: Env, readFile: (path: string) => string = defaultReadFile): Config {
  const clean: Env = {};
  for (const key of Object.keys(EnvSchema.entries)) {
    const value = env[key];
    if (value !== undefined && value !== '') clean[key] = value;
  }
  const parsed = v.safeParse(EnvSchema, clean);
  if (!parsed.success) throw new ConfigError(parsed.issues.map((i) => i.message));
  const e = parsed.output;
  const problems: string[] = [];
  const production = e.NODE_ENV === 'production';
  if (!e.MASTER_KEY && (production || e.DATABASE_URL)) problems.push(masterKeyRequired(production));
  if (production && !e.PUBLIC_BASE_URL) problems.push('PUBLIC_BASE_URL is required when NODE_ENV=production');
  if (e.WORKERS !== 'auto' && Number(e.WORKERS) > 1 && !e.DATABASE_URL)
    problems.push(
      `WORKERS=${e.WORKERS} needs DATABASE_URL: the embedded database (PGlite) has one writer, so it runs in one process (set WORKERS=1, or use Postgres for several)`,
    );
  if (e.MASTER_KEY) {
    const twice = repeatedKeyIds(list(e.MASTER_KEY));
    if (twice.length)
      problems.push(`MASTER_KEY must give each key once, under its own id (repeated: ${twice.join(', ')})`);
  }
  const wide = e.NODE_ENV === 'development' ? [] : list(e.DELIVERY_ALLOW_PRIVATE).filter(isTooWideAllowance);
  if (wide.length)
    problems.push(
      `DELIVERY_ALLOW_PRIVATE must name ranges no wider than /${WIDEST_ALLOWANCE.ipv4} (IPv4) or /${WIDEST_ALLOWANCE.ipv6} (IPv6) unless NODE_ENV=development (got ${wide.join(', ')})`,
    );
  // An earlier setting, now replaced: left set, it would silently give every client the proxy's address.
  if (env.CLIENT_IP_HEADER)
    problems.push(
      'CLIENT_IP_HEADER is no longer read: set TRUSTED_PROXY_HOPS to the number of proxies in front that append to X-Forwarded-For',
    );
  if (e.METRICS_HOST && e.METRICS_PORT === undefined)
    problems.push(
      `METRICS_HOST is set (${JSON.stringify(e.METRICS_HOST)}) but METRICS_PORT is not: metrics are off until METRICS_PORT names their port`,
    );
  // With WORKERS, worker i serves its metrics on METRICS_PORT + i: the whole range must fit and miss PORT.
  if (e.METRICS_PORT !== undefined && Number(e.METRICS_PORT) !== 0) {
    const first = Number(e.METRICS_PORT);
    const count = workersFor(e.WORKERS, e.DATABASE_URL);
    const last = first + count - 1;
    const range = count > 1 ? `${first} to ${last}, one port per worker` : String(first);
    if (last > 65535)
      problems.push(
        `METRICS_PORT must leave room for one port per worker: ${count} workers from ${first} go past 65535`,
      );
    else if (Number(e.PORT) >= first && Number(e.PORT) <= last)
      problems.push(
        count > 1
          ? `METRICS_PORT must keep PORT (${Number(e.PORT)}) out of the metrics ports (${range}): metrics have listeners of their own, off the public port`
          : `METRICS_PORT must differ from PORT (both are ${first}): metrics have a listener of their own, off the public port`,
      );
  }
  let extraCaPem: string | undefined;
  if (e.NODE_EXTRA_CA_CERTS) {
    try {
      extraCaPem = readFile(e.NODE_EXTRA_CA_CERTS);
      if (!extraCaPem.includes('-----BEGIN CERTIFICATE-----'))
        problems.push(
          `NODE_EXTRA_CA_CERTS must name a PEM file of certificates (${e.NODE_EXTRA_CA_CERTS} holds none)`,
        );
    } catch {
      problems.push(
        `NODE_EXTRA_CA_CERTS must name a readable PEM file (cannot read ${e.NODE_EXTRA_CA_CERTS})`,
      );
    }
  }
  if (problems.length) throw new ConfigError(problems);
  const port = Number(e.PORT);
  const publicBaseUrl = (e.PUBLIC_BASE_URL ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const hostMap: Record<string, string> = {};
  for (const pair of list(e.DELIVERY_HOST_MAP)) {
    const [host, ip] = pair.split('=') as [string, string];
    hostMap[host.toLowerCase()] = ip;
  }
  return {
    env: e.NODE_ENV,
    port,
    workers: workersFor(e.WORKERS, e.DATABASE_URL),
    host: e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    publicBaseUrl,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    natsUrls: e.NATS_URL ? list(e.NATS_URL) : undefined,
    natsStreamPrefix: e.NATS_STREAM_PREFIX,
    masterKey: e.MASTER_KEY ? list(e.MASTER_KEY) : undefined,
    headerPrefix: e.HEADER_PREFIX,
    serviceConfig: e.SERVICE_CONFIG,
    plugins: e.PLUGINS === undefined ? undefined : list(e.PLUGINS),
    logLevel: e.LOG_LEVEL,
    bodyLimit: Number(e.BODY_LIMIT),
    requestTimeoutMs: Number(e.REQUEST_TIMEOUT_MS),
    trustedProxyHops: Number(e.TRUSTED_PROXY_HOPS),
    deliveryAllowPrivate: list(e.DELIVERY_ALLOW_PRIVATE),
    deliveryHostMap: hostMap,
    extraCaPem,
    shutdownDrainMs: Number(e.SHUTDOWN_DRAIN_MS),
    shutdownTimeoutMs: Number(e.SHUTDOWN_TIMEOUT_MS),
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? defaultMailFrom(publicBaseUrl),
    mailTemplatesDir: e.MAIL_TEMPLATES_DIR,
    mailRetryWindowMs: Number(e.MAIL_RETRY_WINDOW_MINUTES) * 60_000,
    region: e.REGION,
    metricsPort: e.METRICS_PORT === undefined ? undefined : Number(e.METRICS_PORT),
    metricsHost: e.METRICS_HOST ?? '127.0.0.1',
    environment: Object.freeze({ ...env }),
  };
}

/** WORKERS as a count: `auto` is one per core on Postgres, and one on the embedded database. */
function workersFor(setting: string, databaseUrl: string | undefined): number {
  if (setting !== 'auto') return Number(setting);
  return databaseUrl ? Math.max(1, Math.min(64, availableParallelism())) : 1;
}

/** no-reply@ the public host when it is a domain name; no-reply@localhost for a bare host or an IP. */
function defaultMailFrom(publicBaseUrl: string): string {
  const host = new URL(publicBaseUrl).hostname;
  return /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i.test(host) ? `no-reply@${host}` : 'no-reply@localhost';
}

// Config is read once at start-up, before any server runs, so a synchronous read is fine here.
const defaultReadFile = (path: string): string => readFileSync(path, 'utf8');

export const isMemoryDataDir = (dir: string): boolean => dir === 'memory://' || dir.startsWith('memory://');
