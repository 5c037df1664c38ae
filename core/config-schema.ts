import ipaddr from 'ipaddr.js';
import * as v from 'valibot';
import { isMasterKey } from './config-master-key.ts';

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
export const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** The variables core reads, each with its rule and its default; loadConfig turns them into a Config. */
export const EnvSchema = v.object({
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
  SSO_ALLOW_PRIVATE: v.optional(
    str('SSO_ALLOW_PRIVATE', 'must be a comma-separated list of CIDRs such as 10.20.0.0/16', (s) =>
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
  MAIL_OUTBOX: v.optional(str('MAIL_OUTBOX', 'must be true or false', (s) => s === 'true' || s === 'false')),
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

/** The environment after EnvSchema: every variable checked, defaults filled in, still text. */
export type EnvSettings = v.InferOutput<typeof EnvSchema>;
