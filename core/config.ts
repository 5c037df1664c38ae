import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { settingProblems, workersFor } from './config-checks.ts';
import { EnvSchema, type LogLevel, list } from './config-schema.ts';

export { splitMasterKeyEntry } from './config-master-key.ts';
export type { LogLevel };

/** Reads the process environment once; everything else receives the resulting `Config`. */
export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
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
  /** SSO_ALLOW_PRIVATE: private ranges SSO providers (discovery, JWKS, token, userinfo, profile) may be in. */
  ssoAllowPrivate: string[];
  /** DELIVERY_HOST_MAP: names answered without DNS for every outbound request (deliveries, SSO providers). */
  deliveryHostMap: Record<string, string>;
  /** PEM text of NODE_EXTRA_CA_CERTS, trusted by outbound requests in addition to the system roots. */
  extraCaPem: string | undefined;
  /** How long a shutdown answers /readyz 503 while still serving, before it stops accepting. */
  shutdownDrainMs: number;
  shutdownTimeoutMs: number;
  /**
   * SMTP_URL: where messages go; undefined sends them to the development outbox under DATA_DIR/outbox,
   * which production allows only when chosen (MAIL_OUTBOX=true).
   */
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
  const problems = settingProblems(e, env);
  const production = e.NODE_ENV === 'production';
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
    ssoAllowPrivate: list(e.SSO_ALLOW_PRIVATE),
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

/** no-reply@ the public host when it is a domain name; no-reply@localhost for a bare host or an IP. */
function defaultMailFrom(publicBaseUrl: string): string {
  const host = new URL(publicBaseUrl).hostname;
  return /^[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$/i.test(host) ? `no-reply@${host}` : 'no-reply@localhost';
}

// Config is read once at start-up, before any server runs, so a synchronous read is fine here.
const defaultReadFile = (path: string): string => readFileSync(path, 'utf8');

export const isMemoryDataDir = (dir: string): boolean => dir === 'memory://' || dir.startsWith('memory://');
