import { describe, expect, it } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { loadConfig } from '../../core/config.ts';
import { readSettings } from '../../core/contract/settings.ts';
import definition from '../../service.config.ts';
import { dockerfileStages, interpolate, interpolated, ROOT, stageEnv } from '../helpers/deploy-files.ts';
import { coreSettingNames, deploymentPluginSettings, sourceSettingNames } from '../helpers/settings-read.ts';

const Healthcheck = v.object({ test: v.array(v.string()) });
const Service = v.looseObject({
  image: v.optional(v.string()),
  build: v.optional(v.string()),
  command: v.optional(v.array(v.string())),
  environment: v.optional(v.record(v.string(), v.string())),
  ports: v.optional(v.array(v.string())),
  volumes: v.optional(v.array(v.string())),
  healthcheck: v.optional(Healthcheck),
  depends_on: v.optional(v.record(v.string(), v.object({ condition: v.string() }))),
  init: v.optional(v.boolean()),
  stop_grace_period: v.optional(v.string()),
});
const Compose = v.looseObject({
  services: v.record(v.string(), Service),
  volumes: v.optional(v.record(v.string(), v.nullable(v.object({})))),
});

const compose = v.parse(Compose, Bun.YAML.parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')));
const services = compose.services;
/** The service's replicas: the services built from this repository. */
const replicas = Object.entries(services).filter(([, s]) => s.build === '.');
const image = stageEnv(dockerfileStages().at(-1)!);

/** What .env holds once made as compose.yaml's header says. */
const dotEnv = {
  MASTER_KEY: `k1:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`,
  POSTGRES_PASSWORD: Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('hex'),
  MAIL_OUTBOX: 'true',
};
const resolved = (env: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(env).map(([k, value]) => [k, interpolate(value, dotEnv)]));

/** A replica's environment as the process sees it: the image's ENV, then compose's, interpolated. */
const replicaEnv = (name: string) => ({ ...image, ...resolved(services[name]!.environment) });

const seconds = (duration: string) => {
  const m = /^(\d+)(ms|s|m)$/.exec(duration);
  if (!m) throw new Error(`unread duration ${duration}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as 'ms' | 's' | 'm'];
};

describe('compose.yaml', () => {
  it('runs Postgres, NATS and two replicas of the service built from this repository', () => {
    expect(services.postgres?.image).toMatch(/^postgres:\d+/);
    expect(services.nats?.image).toMatch(/^nats:/);
    expect(replicas.map(([name]) => name)).toEqual(['identity-1', 'identity-2']);
  });

  it('gives every replica the same settings: one MASTER_KEY, one database, one NATS, one public URL', () => {
    const [first, ...others] = replicas.map(([, s]) => s.environment);
    for (const other of others) expect(other).toEqual(first!);
    for (const key of ['MASTER_KEY', 'DATABASE_URL', 'NATS_URL', 'PUBLIC_BASE_URL'])
      expect(first).toHaveProperty(key);
  });

  it('takes the secrets from .env, required, and nothing else without a default', () => {
    const vars = Object.values(services).flatMap((s) =>
      Object.values(s.environment ?? {}).flatMap(interpolated),
    );
    const required = [...new Set(vars.filter((x) => x.op === ':?').map((x) => x.name))].sort();
    expect(required).toEqual(['MASTER_KEY', 'POSTGRES_PASSWORD']);
    expect(vars.filter((x) => x.op === '').map((x) => x.name)).toEqual([]);
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    for (const name of required) expect(example).toContain(`${name}=`);
    expect(example).toContain('openssl rand -base64 32');
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('.env');
    expect(() => resolved(services['identity-1']!.environment).MASTER_KEY).not.toThrow();
    expect(() => interpolate(services['identity-1']!.environment!.MASTER_KEY!, {})).toThrow(/MASTER_KEY/);
  });

  it('sets only variables the service or its runtime reads, and values its configuration accepts', () => {
    const read = new Set([
      // Read by the runtime itself: the shell's PATH, Bun's allocator (the image's ENV).
      'PATH',
      'MIMALLOC_PURGE_DELAY',
      ...coreSettingNames(),
      ...deploymentPluginSettings().flatMap((p) => p.names),
      ...sourceSettingNames().keys(),
    ]);
    for (const [name] of replicas) {
      const env = replicaEnv(name);
      expect(Object.keys(env).filter((k) => !read.has(k))).toEqual([]);
      const config = loadConfig(env);
      expect(config).toMatchObject({ env: 'production', host: '0.0.0.0', natsUrls: ['nats://nats:4222'] });
      for (const plugin of definition.plugins)
        if (plugin.settings) expect(readSettings(plugin.settings, env)).toMatchObject({ ok: true });
    }
  });

  it('points DATABASE_URL at the postgres service with its user, password and database', () => {
    const pg = resolved(services.postgres!.environment);
    const url = new URL(replicaEnv('identity-1').DATABASE_URL!);
    expect(url.hostname).toBe('postgres');
    expect(url.port || '5432').toBe('5432');
    expect(url.username).toBe(pg.POSTGRES_USER!);
    expect(url.password).toBe(pg.POSTGRES_PASSWORD!);
    expect(url.pathname).toBe(`/${pg.POSTGRES_DB}`);
    expect(services.postgres!.volumes).toContain('postgres-data:/var/lib/postgresql/data');
  });

  it('points NATS_URL at the nats service, which runs JetStream with its store on a volume', () => {
    const url = new URL(replicaEnv('identity-1').NATS_URL!);
    expect(url.hostname).toBe('nats');
    expect(url.port).toBe('4222');
    const command = services.nats!.command!;
    expect(command.some((a) => a === '-js' || a === '--jetstream')).toBe(true);
    const store = command[command.findIndex((a) => a === '-sd' || a === '--store_dir') + 1];
    expect(services.nats!.volumes?.map((vol) => vol.split(':')[1])).toContain(store);
    const monitor = command[command.findIndex((a) => a === '-m' || a === '--http_port') + 1];
    expect(services.nats!.healthcheck!.test.join(' ')).toContain(
      `127.0.0.1:${monitor}/healthz?js-enabled-only=true`,
    );
  });

  it('starts the replicas once Postgres and NATS are healthy, and checks their health on /healthz', () => {
    for (const [, replica] of replicas) {
      expect(replica.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        nats: { condition: 'service_healthy' },
      });
      expect(replica.healthcheck?.test).toEqual(['CMD', 'bun', 'scripts/healthcheck.ts']);
    }
    expect(services.postgres!.healthcheck!.test).toEqual([
      'CMD',
      'pg_isready',
      '-U',
      'identity',
      '-d',
      'identity',
    ]);
    // `bun` is on the image's PATH.
    expect(image.PATH?.split(':')[0]).toBe('/app/node_modules/.bin');
  });

  it('publishes each replica on its own host port, to the port the service listens on', () => {
    const published = replicas.map(([name, s]) => {
      expect(s.ports).toHaveLength(1);
      const [host, container] = s.ports![0]!.split(':').slice(-2);
      expect(container).toBe(replicaEnv(name).PORT ?? '3000');
      return host;
    });
    expect(new Set(published).size).toBe(replicas.length);
  });

  it('stops a replica gracefully: tini forwards SIGTERM, and the grace outlasts drain and shutdown', () => {
    for (const [name, s] of replicas) {
      expect(s.init).toBe(true);
      const env = replicaEnv(name);
      const needed = (Number(env.SHUTDOWN_DRAIN_MS ?? 0) + Number(env.SHUTDOWN_TIMEOUT_MS ?? 10_000)) / 1000;
      expect(seconds(s.stop_grace_period ?? '10s')).toBeGreaterThan(needed);
    }
  });

  it('declares every named volume it mounts', () => {
    const named = Object.values(services).flatMap((s) =>
      (s.volumes ?? []).map((vol) => vol.split(':')[0]!).filter((src) => !/^[./~]/.test(src)),
    );
    expect(named.length).toBeGreaterThan(0);
    for (const vol of named) expect(Object.keys(compose.volumes ?? {})).toContain(vol);
  });

  const hasCompose = Bun.spawnSync(['docker', 'compose', 'version'], { stdout: 'ignore', stderr: 'ignore' });
  it.skipIf(hasCompose.exitCode !== 0)(
    'passes `docker compose config` (where Docker Compose is installed)',
    () => {
      const r = Bun.spawnSync(['docker', 'compose', '-f', join(ROOT, 'compose.yaml'), 'config', '--quiet'], {
        env: { ...process.env, ...dotEnv },
      });
      expect(r.stderr.toString()).toBe('');
      expect(r.exitCode).toBe(0);
    },
  );
});
