import { describe, expect, it } from 'bun:test';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { resolveMasterKeyEntries } from '../../core/master-key.ts';

/** Postgres settings, under which WORKERS may be above 1. */
const POSTGRES = { DATABASE_URL: 'postgres://db/ids', MASTER_KEY: `k:${btoa('k'.repeat(32))}` };

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems.join('\n');
    throw e;
  }
  throw new Error('expected a ConfigError');
};

describe('configuration', () => {
  it('has defaults that start a development server on the embedded database', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      env: 'development',
      port: 3000,
      host: '127.0.0.1',
      publicBaseUrl: 'http://localhost:3000',
      dataDir: './data',
      databaseUrl: undefined,
      natsUrls: undefined,
      masterKey: undefined,
      headerPrefix: 'Service',
      plugins: undefined,
      logLevel: 'info',
      bodyLimit: 1048576,
      deliveryAllowPrivate: [],
    });
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://id.example.com/',
      DATA_DIR: '/var/lib/ids',
      DATABASE_URL: 'postgres://u:p@db:5432/ids',
      NATS_URL: 'nats://a:4222, nats://b:4222',
      MASTER_KEY: `new:${btoa('n'.repeat(32))},${btoa('o'.repeat(32))}`,
      HEADER_PREFIX: 'SlashID',
      PLUGINS: 'webhooks, attributes',
      LOG_LEVEL: 'warn',
      DELIVERY_ALLOW_PRIVATE: '127.0.0.0/8,::1/128',
      DELIVERY_HOST_MAP: 'hooks.test=127.0.0.1',
    });
    expect(c.publicBaseUrl).toBe('https://id.example.com');
    expect(c.natsUrls).toEqual(['nats://a:4222', 'nats://b:4222']);
    expect(c.masterKey).toHaveLength(2);
    expect(c.plugins).toEqual(['webhooks', 'attributes']);
    expect(c.deliveryAllowPrivate).toEqual(['127.0.0.0/8', '::1/128']);
    expect(c.deliveryHostMap).toEqual({ 'hooks.test': '127.0.0.1' });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535 (got "eighty")'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must be a postgres:// or postgresql:// URL'],
    [{ NATS_URL: 'http://x' }, 'NATS_URL must be a comma-separated list of nats:// URLs'],
    [
      { MASTER_KEY: 'short' },
      'MASTER_KEY must be a comma-separated list of [kid:]base64 keys of 32 bytes each',
    ],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of debug, info, warn, error, silent (got "loud")'],
    [{ HEADER_PREFIX: 'Bad Prefix' }, 'HEADER_PREFIX must be letters, digits and -'],
    [
      { DELIVERY_ALLOW_PRIVATE: '10.0.0.0/33' },
      'DELIVERY_ALLOW_PRIVATE must be a comma-separated list of CIDRs',
    ],
    [{ PUBLIC_BASE_URL: 'ftp://x' }, 'PUBLIC_BASE_URL must be an http(s) URL'],
    [
      { PUBLIC_BASE_URL: 'https://user:pw@id.example.com' },
      'PUBLIC_BASE_URL must be an http(s) URL without credentials',
    ],
    [
      { MASTER_KEY: `a:${btoa('n'.repeat(32))},a:${btoa('o'.repeat(32))}` },
      'MASTER_KEY must give each key once, under its own id (repeated: a)',
    ],
    [{ MASTER_KEY: `${btoa('n'.repeat(32))},${btoa('n'.repeat(32))}` }, 'MASTER_KEY must give each key once'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be development, production or test'],
    [{ NODE_EXTRA_CA_CERTS: '/nonexistent/ca.pem' }, 'NODE_EXTRA_CA_CERTS must name a readable PEM file'],
  ])('stops start-up on a wrong value, naming the variable and the rule: %j', (env, message) => {
    expect(problemsOf(env as Record<string, string>)).toContain(message);
  });

  it.each([
    ['0.0.0.0/0', 'production'],
    ['::/0', 'test'],
    ['10.0.0.0/7', 'production'],
    ['2001:db8::/31', 'production'],
    ['::ffff:0.0.0.0/96', 'production'],
  ])('refuses DELIVERY_ALLOW_PRIVATE=%s wider than /8 or /32 when NODE_ENV=%s', (cidr, env) => {
    expect(problemsOf({ NODE_ENV: env, DELIVERY_ALLOW_PRIVATE: `127.0.0.0/8,${cidr}` })).toContain(
      `DELIVERY_ALLOW_PRIVATE must name ranges no wider than /8 (IPv4) or /32 (IPv6) unless NODE_ENV=development (got ${cidr})`,
    );
  });

  it('holds SSO_ALLOW_PRIVATE to the same rules: CIDRs, no wider than /8 or /32 outside development', () => {
    expect(problemsOf({ SSO_ALLOW_PRIVATE: '10.0.0.0/33' })).toContain(
      'SSO_ALLOW_PRIVATE must be a comma-separated list of CIDRs',
    );
    for (const env of ['production', 'test'])
      expect(problemsOf({ NODE_ENV: env, SSO_ALLOW_PRIVATE: '10.20.0.0/16,0.0.0.0/0' })).toContain(
        'SSO_ALLOW_PRIVATE must name ranges no wider than /8 (IPv4) or /32 (IPv6) unless NODE_ENV=development (got 0.0.0.0/0)',
      );
    expect(
      loadConfig({ NODE_ENV: 'test', SSO_ALLOW_PRIVATE: '10.20.0.0/16, fd00::/32' }).ssoAllowPrivate,
    ).toEqual(['10.20.0.0/16', 'fd00::/32']);
    expect(loadConfig({ SSO_ALLOW_PRIVATE: '::/0' }).ssoAllowPrivate).toEqual(['::/0']);
    expect(loadConfig({}).ssoAllowPrivate).toEqual([]);
  });

  it('holds CLIENT_JWKS_ALLOW_PRIVATE to the same rules, apart from SSO_ALLOW_PRIVATE', () => {
    expect(problemsOf({ CLIENT_JWKS_ALLOW_PRIVATE: '10.0.0.0/33' })).toContain(
      'CLIENT_JWKS_ALLOW_PRIVATE must be a comma-separated list of CIDRs',
    );
    for (const env of ['production', 'test'])
      expect(problemsOf({ NODE_ENV: env, CLIENT_JWKS_ALLOW_PRIVATE: '10.20.0.0/16,::/0' })).toContain(
        'CLIENT_JWKS_ALLOW_PRIVATE must name ranges no wider than /8 (IPv4) or /32 (IPv6) unless NODE_ENV=development (got ::/0)',
      );
    const config = loadConfig({ NODE_ENV: 'test', CLIENT_JWKS_ALLOW_PRIVATE: '10.20.0.0/16, fd00::/32' });
    expect(config.clientJwksAllowPrivate).toEqual(['10.20.0.0/16', 'fd00::/32']);
    expect(config.ssoAllowPrivate).toEqual([]);
    expect(loadConfig({ CLIENT_JWKS_ALLOW_PRIVATE: '0.0.0.0/0' }).clientJwksAllowPrivate).toEqual([
      '0.0.0.0/0',
    ]);
    expect(loadConfig({}).clientJwksAllowPrivate).toEqual([]);
  });

  it('accepts DELIVERY_ALLOW_PRIVATE ranges of /8 and /32, and any range in development', () => {
    const narrow = '10.0.0.0/8,127.0.0.1/32,fd00::/32,::1/128';
    expect(
      loadConfig({ NODE_ENV: 'test', DELIVERY_ALLOW_PRIVATE: narrow }).deliveryAllowPrivate,
    ).toHaveLength(4);
    expect(loadConfig({ DELIVERY_ALLOW_PRIVATE: '0.0.0.0/0' }).deliveryAllowPrivate).toEqual(['0.0.0.0/0']);
  });

  it('requires MASTER_KEY, PUBLIC_BASE_URL and SMTP_URL in production', () => {
    const p = problemsOf({ NODE_ENV: 'production' });
    expect(p).toContain('MASTER_KEY is required when NODE_ENV=production');
    expect(p).toContain('PUBLIC_BASE_URL is required when NODE_ENV=production');
    expect(p).toContain('SMTP_URL is required when NODE_ENV=production');
  });

  it('requires MASTER_KEY beside DATABASE_URL, saying how to generate one, whatever NODE_ENV says', () => {
    for (const NODE_ENV of ['development', 'test']) {
      const p = problemsOf({ NODE_ENV, DATABASE_URL: 'postgres://db/ids' });
      expect(p).toContain('MASTER_KEY is required when DATABASE_URL is set');
      expect(p).toContain('openssl rand -base64 32');
      expect(p).toContain("randomBytes(32).toString('base64')");
      expect(p).toContain('MASTER_KEY=k1:<the generated key>');
    }
    expect(problemsOf({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db/ids' })).toContain(
      'MASTER_KEY is required when NODE_ENV=production. Generate 32 random bytes',
    );
    const key = `k1:${btoa('k'.repeat(32))}`;
    expect(loadConfig({ DATABASE_URL: 'postgres://db/ids', MASTER_KEY: key }).masterKey).toEqual([key]);
  });

  it('is never generated for Postgres, even from a Config made without loadConfig', () => {
    const config = { ...loadConfig({ DATA_DIR: 'memory://' }), databaseUrl: 'postgres://db/ids' };
    expect(() => resolveMasterKeyEntries(config, createLogger('silent'))).toThrow(
      'MASTER_KEY is required when DATABASE_URL is set',
    );
  });

  it('never echoes a secret in a message', () => {
    const key = 'ab'.repeat(32);
    const p = problemsOf({ MASTER_KEY: key, DATABASE_URL: 'postgres://admin:S3cretPw@db host/x' });
    expect(p).toContain('MASTER_KEY must be');
    expect(p).toContain('the value is not shown');
    expect(p).not.toContain(key);
    expect(p).toContain('DATABASE_URL must be');
    expect(p).toContain('postgres://***@db host/x');
    expect(p).not.toContain('S3cretPw');
    expect(problemsOf({ SHUTDOWN_TIMEOUT_MS: '0' })).toContain(
      'SHUTDOWN_TIMEOUT_MS must be an integer from 1',
    );
  });

  it('keeps metrics off by default, and opens them on METRICS_PORT, on loopback unless METRICS_HOST says', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsHost: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({
      metricsPort: 9464,
      metricsHost: '127.0.0.1',
    });
    expect(
      loadConfig({
        NODE_ENV: 'production',
        MASTER_KEY: `k:${btoa('k'.repeat(32))}`,
        PUBLIC_BASE_URL: 'https://id.example.com',
        SMTP_URL: 'smtp://mail.example.com',
        METRICS_PORT: '9464',
      }).metricsHost,
    ).toBe('127.0.0.1');
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({
      metricsPort: 0,
      metricsHost: '0.0.0.0',
    });
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeUndefined();
    // Four workers on 9464 to 9467, PORT outside them.
    expect(loadConfig({ ...POSTGRES, WORKERS: '4', METRICS_PORT: '9464' }).metricsPort).toBe(9464);
  });

  it.each([
    [
      { METRICS_PORT: 'metrics' },
      'METRICS_PORT must be an integer from 0 to 65535 (0: a free port, logged at start) (got "metrics")',
    ],
    [{ METRICS_PORT: '65536' }, 'METRICS_PORT must be an integer from 0 to 65535'],
    [{ METRICS_PORT: '-1' }, 'METRICS_PORT must be an integer from 0 to 65535'],
    [
      { METRICS_PORT: '9464', METRICS_HOST: 'a b' },
      'METRICS_HOST must be a host name or IP address (got "a b")',
    ],
    [
      { METRICS_HOST: '0.0.0.0' },
      'METRICS_HOST is set ("0.0.0.0") but METRICS_PORT is not: metrics are off until METRICS_PORT names their port',
    ],
    [
      { PORT: '8080', METRICS_PORT: '8080' },
      'METRICS_PORT must differ from PORT (both are 8080): metrics have a listener of their own, off the public port',
    ],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT must differ from PORT (both are 3000)'],
    [
      { ...POSTGRES, WORKERS: '4', PORT: '9466', METRICS_PORT: '9464' },
      'METRICS_PORT must keep PORT (9466) out of the metrics ports (9464 to 9467, one port per worker)',
    ],
    [
      { ...POSTGRES, WORKERS: '4', METRICS_PORT: '65534' },
      'METRICS_PORT must leave room for one port per worker: 4 workers from 65534 go past 65535',
    ],
  ])('stops start-up on a wrong metrics setting, naming it and the rule: %j', (env, message) => {
    expect(problemsOf(env as Record<string, string>)).toContain(message);
  });

  it('reports every wrong variable at once', () => {
    const p = problemsOf({ PORT: 'x', LOG_LEVEL: 'y' });
    expect(p).toContain('PORT');
    expect(p).toContain('LOG_LEVEL');
  });

  it('reads WORKERS: one process by default, a count, or auto for one per core on Postgres', () => {
    const pg = { DATABASE_URL: 'postgres://h/db', MASTER_KEY: `k1:${btoa('m'.repeat(32))}` };
    expect(loadConfig({}).workers).toBe(1);
    expect(loadConfig({ ...pg, WORKERS: '3' }).workers).toBe(3);
    expect(loadConfig({ ...pg, WORKERS: 'auto' }).workers).toBe(availableParallelism());
    // The embedded database has one writer: auto means one process there.
    expect(loadConfig({ WORKERS: 'auto' }).workers).toBe(1);
    expect(problemsOf({ WORKERS: '0' })).toContain(
      'WORKERS must be auto or an integer from 1 to 64 (got "0")',
    );
    expect(problemsOf({ WORKERS: 'many' })).toContain('WORKERS must be auto or an integer from 1 to 64');
    expect(problemsOf({ WORKERS: '2' })).toContain(
      'WORKERS=2 needs DATABASE_URL: the embedded database (PGlite) has one writer, so it runs in one process',
    );
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' }).port).toBe(3000);
  });
});

describe('the generated master key', () => {
  const log = createLogger('silent');
  it('is generated once into DATA_DIR and read back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mk-'));
    const config = loadConfig({ DATA_DIR: dir });
    const first = resolveMasterKeyEntries(config, log);
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toBe(first[0]!);
    expect(resolveMasterKeyEntries(config, log)).toEqual(first);
    rmSync(dir, { recursive: true });
  });

  it('must be listed in MASTER_KEY once MASTER_KEY is set beside it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mk-'));
    const [fileKey] = resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir }), log);
    const other = btoa('o'.repeat(32));
    expect(() =>
      resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir, MASTER_KEY: `new:${other}` }), log),
    ).toThrow('MASTER_KEY does not list the key in');
    // The file's key as it is, with no id: what it sealed carries the id derived from it.
    const both = `new:${other},${fileKey}`;
    expect(resolveMasterKeyEntries(loadConfig({ DATA_DIR: dir, MASTER_KEY: both }), log)).toEqual([
      `new:${other}`,
      fileKey!,
    ]);
    rmSync(dir, { recursive: true });
  });

  it('is not generated anew beside a database sealed with a lost one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mk-'));
    mkdirSync(join(dir, 'pglite'));
    const config = loadConfig({ DATA_DIR: dir });
    expect(() => resolveMasterKeyEntries(config, log)).toThrow(
      'restore master.key into DATA_DIR or set MASTER_KEY to that key',
    );
    expect(existsSync(join(dir, 'master.key'))).toBe(false);
    rmSync(dir, { recursive: true });
  });
});
