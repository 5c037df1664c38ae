import ipaddr from 'ipaddr.js';
import { isMasterKey } from './config-master-key.ts';
import { integer, oneOf, type SettingKind, text } from './contract/setting-kinds.ts';
import type { Setting } from './contract/settings.ts';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

/** The sections of docs/configuration.md that hold core's settings. */
export type SettingsGroup = 'server' | 'storage' | 'deployment' | 'outbound' | 'messages' | 'region';

/** A setting of core: where the reference lists it, and how a message may show a wrong value. */
export interface CoreSetting<T = unknown> extends Setting<T> {
  readonly group: SettingsGroup;
  /** A secret: a wrong value is never echoed. */
  readonly secret?: true;
  /** A URL that may hold credentials: a wrong value is echoed without them. */
  readonly credentials?: true;
  /** False for a variable loadConfig does not read (another part of the program does). */
  readonly schema?: false;
}

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

const hostName = (): SettingKind<string> =>
  text(
    'must be a host name or IP address',
    (s) => /^[A-Za-z0-9.:-]+$/.test(s),
    'letters, digits, `.`, `:` and `-` (a host name or an IP address)',
  );
const cidrs = (example: string) =>
  text(
    `must be a comma-separated list of CIDRs such as ${example}`,
    (s) => list(s).every(isCidr),
    'a comma-separated list of CIDRs',
  );
const NARROW_ALLOWANCE = 'outside `NODE_ENV=development` none wider than an IPv4 /8 or an IPv6 /32';

const core = <S extends CoreSetting>(s: S): S => s;

/**
 * Every variable core reads, declared once: its rule (checked by EnvSchema, with the message a wrong value
 * gets), its default, and the line of docs/configuration.md (`npm run docs` writes the tables from these).
 * Rules between settings are in config-checks.ts; a declaration's `note` says them in the reference.
 */
export const CORE_SETTINGS = {
  NODE_ENV: core({
    group: 'server',
    kind: oneOf(['development', 'production', 'test'], 'must be development, production or test'),
    default: 'development',
    description:
      '`production` requires `MASTER_KEY` and `PUBLIC_BASE_URL`, listens on `0.0.0.0` unless `HOST` says otherwise, makes no development organization and stops at start without `SMTP_URL` unless `MAIL_OUTBOX=true` chooses the development outbox. Outside `development`, `DELIVERY_ALLOW_PRIVATE`, `SSO_ALLOW_PRIVATE` and `CLIENT_JWKS_ALLOW_PRIVATE` may not name wide ranges. The container image sets `production`',
  }),
  PORT: core({
    group: 'server',
    kind: integer(0, 65535),
    default: 3000,
    description:
      'the listening port; a port in use stops start-up at once with one line, before anything is written',
  }),
  WORKERS: core({
    group: 'server',
    kind: text(
      'must be auto or an integer from 1 to 64',
      (s) => s === 'auto' || integer(1, 64).ok(s),
      '`auto` or an integer from 1 to 64',
    ),
    default: '1',
    description:
      'server processes sharing the port (`auto`: one per core, `os.availableParallelism()`), each with the HTTP API and the delivery pipeline (`SO_REUSEPORT` on Bun, the cluster on Node; refused on Deno). Needs `DATABASE_URL`: the embedded database (PGlite) has one writer, so a number above 1 stops start-up there and `auto` means 1',
  }),
  HOST: core({
    group: 'server',
    kind: hostName(),
    defaultText: '`127.0.0.1` (`0.0.0.0` with `NODE_ENV=production`)',
    description: 'the listening address; the image sets `0.0.0.0`',
  }),
  PUBLIC_BASE_URL: core({
    group: 'server',
    credentials: true,
    kind: text(
      'must be an http(s) URL without credentials, query or fragment',
      (s) => isUrl(['http:', 'https:'])(s) && !/[?#]/.test(s) && !/^[a-z]+:\/\/[^/]*@/i.test(s),
      'an `http(s)` URL without credentials, query or fragment',
    ),
    defaultText: '`http://localhost:$PORT`',
    note: 'trailing `/` removed; required with `NODE_ENV=production`',
    description:
      "the address clients use (a load balancer's, with replicas): the `iss` of identity tokens, OAuth tokens and webhook JWTs, the base of links in messages, the default `MAIL_FROM` domain. The same on every replica",
  }),
  DATA_DIR: core({
    group: 'storage',
    kind: text(
      'must be a directory path or memory://',
      (s) => s.length > 0,
      'a non-empty path, or `memory://`',
    ),
    default: './data',
    defaultText: '`./data` (`/data` in the image)',
    description:
      'the embedded database (`$DATA_DIR/pglite`), the generated `master.key`, the development outbox (`$DATA_DIR/outbox/`) and the lock `$DATA_DIR/.lock`; `memory://` keeps everything in memory. One process at a time may open an embedded database',
  }),
  DATABASE_URL: core({
    group: 'storage',
    credentials: true,
    kind: text(
      'must be a postgres:// or postgresql:// URL',
      isUrl(['postgres:', 'postgresql:']),
      'a `postgres://` or `postgresql://` URL',
    ),
    defaultText: 'unset: PGlite in `DATA_DIR`',
    description:
      'Postgres, for several replicas; start-up stops with a message if it has not answered as Postgres within 10 s. Requires `MASTER_KEY`',
  }),
  DATABASE_SCHEMA: core({
    group: 'storage',
    kind: text(
      'must be a lower-case SQL identifier',
      (s) => /^[a-z_][a-z0-9_]{0,62}$/.test(s),
      'a lower-case SQL identifier (`[a-z_][a-z0-9_]{0,62}`)',
    ),
    defaultText: 'unset: `public`',
    description:
      'a schema of its own for every table, created if missing (a role that owns a schema made beforehand needs no CREATE on the database)',
  }),
  NATS_URL: core({
    group: 'storage',
    credentials: true,
    kind: text(
      'must be a comma-separated list of nats:// URLs',
      (s) => list(s).length > 0 && list(s).every(isUrl(['nats:', 'tls:'])),
      'a comma-separated list of `nats://` or `tls://` URLs',
    ),
    defaultText: 'unset: the Postgres-backed queue (pg-queue)',
    description: 'NATS servers with JetStream on, for the event streams (`nats://a:4222,nats://b:4222`)',
  }),
  NATS_STREAM_PREFIX: core({
    group: 'storage',
    kind: text(
      'must be letters, digits and _ (at most 32)',
      (s) => /^[A-Za-z0-9_]{1,32}$/.test(s),
      'letters, digits and `_`, 1 to 32',
    ),
    default: 'IDS',
    description:
      'prefix of the JetStream stream names and subjects; two deployments on one NATS need two prefixes',
  }),
  MASTER_KEY: core({
    group: 'storage',
    secret: true,
    kind: text(
      'must be a comma-separated list of [kid:]base64 keys of 32 bytes each',
      (s) => list(s).length > 0 && list(s).every(isMasterKey),
      'a comma-separated list of `[kid:]key`, current first: `kid` 1 to 32 letters, digits, `_` and `-`, each id once; `key` 32 bytes as base64 (or base64url)',
    ),
    defaultText:
      'unset: on the embedded database outside production, generated once into `DATA_DIR/master.key` with a warning (a throw-away key with `memory://`)',
    note: 'required with `DATABASE_URL` or `NODE_ENV=production`',
    description:
      'seals secrets at rest (signing keys, webhook custom headers, attribute values, queued messages, SSO client secrets). Make one with `openssl rand -base64 32` and set `MASTER_KEY=k1:<key>`, the same on every replica. A lost `master.key` beside an existing database stops start-up, as does a `MASTER_KEY` that does not list the key of an existing `master.key`; on any database, so does a `MASTER_KEY` that opens none of the secrets already stored (a few of each kind are tried). List the old key after the new one to rotate: [operating.md](operating.md#rotating-the-master-key)',
  }),
  HEADER_PREFIX: core({
    group: 'server',
    kind: text(
      'must be letters, digits and - (at most 32)',
      (s) => /^[A-Za-z0-9-]{1,32}$/.test(s),
      'letters, digits and `-`, 1 to 32',
    ),
    default: 'Service',
    description:
      "the `Service` of `Service-OrgID`, `Service-API-Key`, ...; `SlashID` serves clients written for the vendor's names",
  }),
  SERVICE_CONFIG: core({
    group: 'deployment',
    kind: text(
      'must be the path of a .ts or .js file that default-exports defineService(...)',
      (s) => /\.(m?[jt]s)$/.test(s),
      'a path ending in `.ts`, `.js`, `.mts` or `.mjs`, relative to the working directory',
    ),
    defaultText: '`service.config.ts`',
    description:
      'the deployment file whose default export is `defineService({ plugins })`: which plugins run, with which options',
  }),
  PLUGINS: core({
    group: 'deployment',
    kind: text(
      'must be a comma-separated list of plugin ids',
      (s) => list(s).every((x) => /^[a-z0-9-]+$/.test(x)),
      'a comma-separated list of plugin ids (lower-case letters, digits and `-`)',
    ),
    defaultText: 'every plugin of the deployment file',
    description:
      "narrows the deployment file's list without a code change; start-up names any plugin a narrowed list still needs",
  }),
  LOG_LEVEL: core({
    group: 'server',
    kind: oneOf(LEVELS),
    default: 'info',
    description:
      'JSON log lines on standard output, one per request at `info`. The CLI writes its own to standard error, at `warn` when this is `info`',
  }),
  BODY_LIMIT: core({
    group: 'server',
    kind: text(
      'must be a byte count from 1024 to 67108864',
      integer(1024, 64 * 1024 * 1024).ok,
      'an integer from 1024 to 67108864',
    ),
    default: String(1024 * 1024),
    defaultText: '`1048576` (1 MiB)',
    description: 'request body limit in bytes (`413` above it, enforced while streaming)',
  }),
  REQUEST_TIMEOUT_MS: core({
    group: 'server',
    kind: integer(1000, 250_000),
    default: 10_000,
    description: 'how long a request body may take to arrive after its headers (`408` past it)',
  }),
  DELIVERY_ALLOW_PRIVATE: core({
    group: 'outbound',
    kind: cidrs('127.0.0.0/8'),
    defaultText: 'none',
    note: NARROW_ALLOWANCE,
    description:
      'private ranges webhook deliveries may reach (`127.0.0.0/8` for development); logged in one warn line at start',
  }),
  SSO_ALLOW_PRIVATE: core({
    group: 'outbound',
    kind: cidrs('10.20.0.0/16'),
    defaultText: 'none',
    note: NARROW_ALLOWANCE,
    description:
      "private ranges SSO providers may be in (an identity provider on the operator's own network, `10.20.0.0/16`; `127.0.0.0/8` for one on the same machine in development); logged in one warn line at start. Providers are reached over https only, whatever it says: serve a private provider with a certificate from a CA in `NODE_EXTRA_CA_CERTS`",
  }),
  CLIENT_JWKS_ALLOW_PRIVATE: core({
    group: 'outbound',
    kind: cidrs('10.20.0.0/16'),
    defaultText: 'none',
    note: NARROW_ALLOWANCE,
    description:
      "private ranges OAuth clients' `jwks_uri` may be in (`private_key_jwt` clients whose keys are served on the operator's own network; `127.0.0.0/8` for one on the same machine in development); logged in one warn line at start. Key sets are fetched over https only: serve a private one with a certificate from a CA in `NODE_EXTRA_CA_CERTS`",
  }),
  DELIVERY_HOST_MAP: core({
    group: 'outbound',
    kind: text(
      'must be a comma-separated list of host=IP pairs',
      (s) =>
        list(s).every((p) => /^[A-Za-z0-9.-]+=[0-9A-Fa-f.:]+$/.test(p) && ipaddr.isValid(p.split('=')[1]!)),
      'a comma-separated list of `host=IP` pairs',
    ),
    defaultText: 'none',
    description:
      'host names resolved without DNS, for deliveries and SSO providers alike (test host names such as `hooks.test`; the address is still vetted)',
  }),
  NODE_EXTRA_CA_CERTS: core({
    group: 'outbound',
    // Read as a file by loadConfig, which names what is wrong with it.
    kind: text('must name a readable PEM file', () => true),
    defaultText: 'none',
    ruleText: 'a readable PEM file holding at least one certificate',
    description:
      "extra certificate authorities that webhook deliveries, SSO providers and SMTP trust besides the system's (a private CA). Bun and Node also read it themselves at start",
  }),
  TRUSTED_PROXY_HOPS: core({
    group: 'server',
    kind: integer(0, 10),
    default: 0,
    description:
      "how many proxies in front append the address they saw to `X-Forwarded-For`. `0`: the client address is the socket's peer and no header is believed. `n`: the `n`th entry from the right (the one the outermost trusted proxy wrote; entries left of it are the client's own and ignored), the socket's when the header is absent. Set it only when every request passes those proxies. It feeds rate limits per address, events' `client_ip_address` and the `token_minted` hook",
  }),
  SHUTDOWN_DRAIN_MS: core({
    group: 'server',
    kind: integer(0, 600_000),
    default: 0,
    description:
      'on SIGTERM or SIGINT, how long `/readyz` answers `503` while requests are still served, before the listener closes (time for a load balancer to take the replica out)',
  }),
  SHUTDOWN_TIMEOUT_MS: core({
    group: 'server',
    kind: integer(1, 600_000),
    default: 10_000,
    description:
      "how long a graceful shutdown may take after the drain before the process exits with 1; a container's stop timeout must exceed drain plus this",
  }),
  SMTP_URL: core({
    group: 'messages',
    credentials: true,
    kind: text(
      'must be an smtp:// (STARTTLS where offered) or smtps:// (TLS) URL with a host, such as smtp://user:pass@mail.example.com:587',
      (s) => isUrl(['smtp:', 'smtps:'])(s) && new URL(s).hostname !== '',
      'an `smtp://` (STARTTLS whenever offered) or `smtps://` (TLS) URL with a host',
    ),
    defaultText: 'unset: the development outbox',
    note: 'required with `NODE_ENV=production` unless `MAIL_OUTBOX=true`',
    description:
      'where messages (password reset and email verification links) go: `smtp://user:pass@mail.example.com:587`. Unset, the development outbox: `.eml` files under `DATA_DIR/outbox/` with their links listed in `DATA_DIR/outbox/index.jsonl` (in memory with `DATA_DIR=memory://`), and a log line each that never holds the link',
  }),
  MAIL_OUTBOX: core({
    group: 'messages',
    kind: text('must be true or false', (s) => s === 'true' || s === 'false', '`true` or `false`'),
    defaultText: 'unset: the development outbox when `SMTP_URL` is unset, outside production',
    note: '`true` not beside `SMTP_URL`, `false` only beside it',
    description:
      '`true` chooses the development outbox on purpose, the only way to run production without `SMTP_URL` (a trial, a staging copy: the messages reach nobody, a warning at start says so); `false` requires `SMTP_URL` in every mode',
  }),
  MAIL_FROM: core({
    group: 'messages',
    kind: text(
      'must be an email address such as no-reply@example.com',
      (s) => /^[^\s@<>"]{1,64}@[A-Za-z0-9.-]{1,253}$/.test(s),
      'an email address',
    ),
    defaultText: '`no-reply@` the host of `PUBLIC_BASE_URL` (`no-reply@localhost` for a bare host or an IP)',
    description: "the sender; the organization's name is its display name",
  }),
  MAIL_TEMPLATES_DIR: core({
    group: 'messages',
    kind: text('must be a directory path', (s) => s.length > 0, 'a directory that exists'),
    defaultText: 'none',
    description:
      'message templates that replace the built-in ones, checked at start (see [messages](guides/messages.md#delivery))',
  }),
  MAIL_RETRY_WINDOW_MINUTES: core({
    group: 'messages',
    kind: integer(1, 1440),
    default: 60,
    description: 'how long a message the transport refuses is retried before it is dropped',
  }),
  METRICS_PORT: core({
    group: 'server',
    kind: text(
      'must be an integer from 0 to 65535 (0: a free port, logged at start)',
      integer(0, 65535).ok,
      "an integer from 0 to 65535 (`0`: a free port, in the `listening` line's `metrics_url`)",
    ),
    defaultText: 'unset: metrics off, nothing counted',
    note: 'not `PORT`; with `WORKERS`, `METRICS_PORT` + workers - 1 at most 65535 and clear of `PORT`',
    description:
      'opens a second listener serving only `GET /metrics` (Prometheus text) and `/healthz`, apart from the public port, which never serves `/metrics`. With `WORKERS`, worker `i` serves its own on `METRICS_PORT + i`: scrape each. A taken port stops start-up with one line naming `METRICS_PORT`. The series: [operating.md](operating.md#metrics-and-logs)',
  }),
  METRICS_HOST: core({
    group: 'server',
    kind: hostName(),
    defaultText: '`127.0.0.1`',
    note: 'only with `METRICS_PORT`',
    description:
      'the address of the metrics listener; `0.0.0.0` lets a Prometheus on another host (or outside the container) scrape it',
  }),
  REGION: core({
    group: 'region',
    kind: text(
      'must be a region name of 1 to 64 lower-case letters, digits and -',
      (s) => /^[a-z0-9][a-z0-9-]{0,63}$/.test(s),
      '1 to 64 lower-case letters, digits and `-`, starting with a letter or digit',
    ),
    default: 'us-iowa',
    description:
      "the region that holds the deployment's data: the `region` of the `_InRegion_v1` events about roles and permissions (those about a person carry the person's region)",
  }),
  WORKER_INDEX: core({
    group: 'server',
    schema: false,
    kind: integer(0, 63),
    defaultText: 'set by the supervisor',
    ruleText: 'none: not for operators',
    description:
      "the number of a worker started by `WORKERS` (its log lines' `worker`); the supervisor sets it for each worker it starts",
  }),
};
