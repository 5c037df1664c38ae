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

/**
 * The settings core reads, as the program uses them. Each field comes from the variable named beside it,
 * whose rule, default and meaning are declared once, in core/config-settings.ts (and shown in
 * docs/configuration.md).
 */
export interface Config {
  /** NODE_ENV */
  env: 'development' | 'production' | 'test';
  /** PORT */
  port: number;
  /** HOST, else by NODE_ENV */
  host: string;
  /** WORKERS as a count: `auto` resolved, 1 on the embedded database */
  workers: number;
  /** PUBLIC_BASE_URL without a trailing `/` */
  publicBaseUrl: string;
  /** DATA_DIR */
  dataDir: string;
  /** DATABASE_URL */
  databaseUrl: string | undefined;
  /** DATABASE_SCHEMA */
  databaseSchema: string | undefined;
  /** NATS_URL, split */
  natsUrls: string[] | undefined;
  /** NATS_STREAM_PREFIX */
  natsStreamPrefix: string;
  /** MASTER_KEY's entries, current first; undefined: generate one in DATA_DIR (allowed only where it may) */
  masterKey: string[] | undefined;
  /** HEADER_PREFIX */
  headerPrefix: string;
  /** SERVICE_CONFIG */
  serviceConfig: string | undefined;
  /** PLUGINS, split; undefined means every plugin in the deployment file */
  plugins: string[] | undefined;
  /** LOG_LEVEL */
  logLevel: LogLevel;
  /** BODY_LIMIT */
  bodyLimit: number;
  /** REQUEST_TIMEOUT_MS */
  requestTimeoutMs: number;
  /** TRUSTED_PROXY_HOPS */
  trustedProxyHops: number;
  /** DELIVERY_ALLOW_PRIVATE, split */
  deliveryAllowPrivate: string[];
  /** SSO_ALLOW_PRIVATE, split */
  ssoAllowPrivate: string[];
  /** CLIENT_JWKS_ALLOW_PRIVATE, split */
  clientJwksAllowPrivate: string[];
  /** DELIVERY_HOST_MAP, as host (lower-case) to address */
  deliveryHostMap: Record<string, string>;
  /** The PEM text of the file NODE_EXTRA_CA_CERTS names */
  extraCaPem: string | undefined;
  /** SHUTDOWN_DRAIN_MS */
  shutdownDrainMs: number;
  /** SHUTDOWN_TIMEOUT_MS */
  shutdownTimeoutMs: number;
  /** SMTP_URL; undefined: the development outbox */
  smtpUrl: string | undefined;
  /** MAIL_FROM, else its default from the public host */
  mailFrom: string;
  /** MAIL_TEMPLATES_DIR */
  mailTemplatesDir: string | undefined;
  /** MAIL_RETRY_WINDOW_MINUTES, in milliseconds */
  mailRetryWindowMs: number;
  /** REGION */
  region: string;
  /** METRICS_PORT; undefined: metrics off */
  metricsPort: number | undefined;
  /** METRICS_HOST, else its default */
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
    clientJwksAllowPrivate: list(e.CLIENT_JWKS_ALLOW_PRIVATE),
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
