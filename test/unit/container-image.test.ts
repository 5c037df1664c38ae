import { describe, expect, it } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../core/config.ts';
import { IMAGE_RUNTIME_ENV } from '../../scripts/bench/processes.ts';
import { checkHealth, healthzUrl } from '../../scripts/healthcheck.ts';
import {
  dockerContextAdmits,
  dockerfileStages,
  execForm,
  importGraph,
  ROOT,
  stageEnv,
} from '../helpers/deploy-files.ts';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  workspaces: string[];
};
const stages = dockerfileStages();
const final = stages.at(-1)!;
const args = (op: string) => final.filter((i) => i.op === op).map((i) => i.args);
const env = stageEnv(final);
const cmd = execForm(args('CMD').at(-1) ?? '');
const healthcheck = args('HEALTHCHECK').at(-1) ?? '';

/** What the image runs: the server (CMD), the admin CLI, the healthcheck, and the deployment file. */
const ENTRIES = [
  'entry/bun.ts',
  'scripts/cli.ts',
  'scripts/cli-bin.mjs',
  'scripts/healthcheck.ts',
  'service.config.ts',
];

describe('the Dockerfile', () => {
  it('runs what `npm start` runs, on Bun in exec form, so Bun itself receives SIGTERM', () => {
    const start = pkg.scripts.start!.split(' ');
    expect(start[0]).toBe('bun');
    expect(cmd).toBeDefined();
    expect(cmd![0]).toMatch(/(^|\/)bun$/);
    expect(cmd!.slice(1)).toEqual(start.slice(1));
    expect(args('ENTRYPOINT')).toEqual([]);
    expect(args('STOPSIGNAL')).toEqual(['SIGTERM']);
  });

  it('runs as a user other than root, with DATA_DIR on a volume that user owns and PORT exposed', () => {
    const user = args('USER').at(-1);
    expect(user).toBeDefined();
    expect(['root', '0']).not.toContain(user!.split(':')[0]);
    expect(env.DATA_DIR).toBe('/data');
    expect(args('VOLUME').join(' ')).toContain(`"${env.DATA_DIR}"`);
    expect(args('RUN').some((r) => r.includes(`chown ${user}`) && r.includes(env.DATA_DIR!))).toBe(true);
    expect(args('EXPOSE')).toEqual([env.PORT!]);
    expect(env.HOST).toBe('0.0.0.0');
  });

  it('checks health with the image own Bun and scripts/healthcheck.ts, no curl', () => {
    const check = execForm(healthcheck.replace(/^.*?CMD\s+/, ''));
    expect(check).toBeDefined();
    expect(check![0]).toBe(cmd![0]);
    expect(check!.slice(1)).toEqual(['scripts/healthcheck.ts']);
    expect(healthcheck).not.toContain('curl');
  });

  it('installs production dependencies only, which hold every package the image imports', () => {
    const install = stages
      .flatMap((s) => s.filter((i) => i.op === 'RUN'))
      .find((i) => i.args.includes('npm ci'));
    expect(install?.args).toContain('--omit=dev');
    const { packages } = importGraph(ENTRIES);
    expect(packages).toEqual(expect.arrayContaining(['elysia', 'swagger-ui-dist', 'bun']));
    expect(packages.filter((p) => !(p in pkg.dependencies))).toEqual([]);
  });

  it('copies the workspaces before npm ci, which resolves every one the lockfile lists', () => {
    const copied = stages[0]!.filter((i) => i.op === 'COPY').map((i) => i.args);
    for (const ws of pkg.workspaces) expect(copied.join(' ')).toContain(ws.replace('/*', '/'));
    expect(copied.join(' ')).toContain('package-lock.json');
  });

  it('lets into the build context every file the image runs, and no tests, data or .env', () => {
    const { files } = importGraph(ENTRIES);
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !dockerContextAdmits(f))).toEqual([]);
    for (const f of ['package.json', 'package-lock.json', '.npmrc', 'examples/plan-claims/package.json'])
      expect(dockerContextAdmits(f)).toBe(true);
    for (const f of [
      'test/unit/config.test.ts',
      'core/x.test.ts',
      'data/pglite/PG_VERSION',
      '.env',
      '.git/HEAD',
    ])
      expect(dockerContextAdmits(f)).toBe(false);
    expect(dockerContextAdmits('node_modules/bun/package.json')).toBe(false);
  });

  it("gives Bun's allocator the purge delay the benchmarks measure the server with", () => {
    expect(env.MIMALLOC_PURGE_DELAY).toBe('10000');
    expect(IMAGE_RUNTIME_ENV.MIMALLOC_PURGE_DELAY).toBe(
      process.env.MIMALLOC_PURGE_DELAY ?? env.MIMALLOC_PURGE_DELAY!,
    );
  });

  it("starts only with MASTER_KEY, PUBLIC_BASE_URL and SMTP_URL beside the image's settings (production)", () => {
    expect(env.NODE_ENV).toBe('production');
    const missing = (() => {
      try {
        loadConfig({ ...env });
        return [];
      } catch (e) {
        if (e instanceof ConfigError) return e.problems;
        throw e;
      }
    })();
    expect(missing.join('\n')).toContain('MASTER_KEY is required');
    expect(missing.join('\n')).toContain('PUBLIC_BASE_URL is required');
    expect(missing.join('\n')).toContain('SMTP_URL is required');
    const key = `k1:${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
    const config = loadConfig({
      ...env,
      MASTER_KEY: key,
      PUBLIC_BASE_URL: 'https://id.example.com',
      SMTP_URL: 'smtp://mail.example.com:587',
    });
    expect(config).toMatchObject({ host: '0.0.0.0', port: 3000, dataDir: '/data', env: 'production' });
  });
});

describe('scripts/healthcheck.ts', () => {
  it('asks /healthz on loopback for a wildcard HOST, on PORT', () => {
    expect(healthzUrl({})).toBe('http://127.0.0.1:3000/healthz');
    expect(healthzUrl({ HOST: '0.0.0.0', PORT: '8080' })).toBe('http://127.0.0.1:8080/healthz');
    expect(healthzUrl({ HOST: '::', PORT: '8080' })).toBe('http://[::1]:8080/healthz');
    expect(healthzUrl({ HOST: '10.0.0.5' })).toBe('http://10.0.0.5:3000/healthz');
  });

  it('exits 0 when /healthz answers 200, and 1 with a line when it answers otherwise or not at all', async () => {
    let status = 200;
    const server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req) => new Response('{}', { status: new URL(req.url).pathname === '/healthz' ? status : 404 }),
    });
    // Spawned, not spawnSync: the server answering it runs on this process's event loop.
    const run = async (port: number) => {
      const child = Bun.spawn([process.execPath, join(ROOT, 'scripts/healthcheck.ts')], {
        env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '0.0.0.0' },
        stderr: 'pipe',
      });
      return { exitCode: await child.exited, stderr: await new Response(child.stderr).text() };
    };
    try {
      expect((await run(server.port as number)).exitCode).toBe(0);
      status = 503;
      const failed = await run(server.port as number);
      expect(failed.exitCode).toBe(1);
      expect(failed.stderr).toContain('/healthz answered 503');
      expect(await checkHealth(`http://127.0.0.1:${server.port}/healthz`)).toContain('answered 503');
    } finally {
      server.stop(true);
    }
    const closed = await run(server.port as number);
    expect(closed.exitCode).toBe(1);
    expect(closed.stderr).toContain('did not answer');
  });

  it('is a file the image holds', () => {
    expect(existsSync(join(ROOT, 'scripts/healthcheck.ts'))).toBe(true);
    expect(dockerContextAdmits('scripts/healthcheck.ts')).toBe(true);
  });
});
