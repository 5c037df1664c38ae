import { describe, expect, it } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planLookup } from '@identity-service-examples/plan-claims';
import deployment from '@identity-service-examples/plan-claims/service.config';
import { expectStatus } from '../helpers/expect-status.ts';
import { startTestService } from '../helpers/service.ts';
import { tokenIssuerPlugin } from '../helpers/token-issuer.ts';

const ROOT = join(import.meta.dir, '..', '..');

const issuer = tokenIssuerPlugin;

describe('a plugin kept outside plugins/ (examples/plan-claims)', () => {
  it('runs from the deployment config: its table, routes, settings, capability and hook', async () => {
    const t = await startTestService({
      env: { PLAN_CLAIM_NAME: 'tier' },
      definition: { plugins: [...deployment.plugins, issuer] },
    });
    try {
      expect(t.service.plugins).toContain('plan-claims');
      // The default plan until the organization sets one.
      expect((await t.call('POST', '/issue')).json.result).toEqual({ sub: 'pid:1', tier: 'free' });
      await expectStatus(await t.call('PUT', '/plan', { body: { plan: 'pro' } }), 204);
      const read = await t.call('GET', '/plan');
      await expectStatus(read, 200);
      expect(read.json.result).toEqual({ plan: 'pro' });
      expect((await t.call('POST', '/issue')).json.result).toEqual({ sub: 'pid:1', tier: 'pro' });
      expect(await t.service.ctx.capability(planLookup)?.planOf(t.org.id)).toBe('pro');
      const bad = await t.call('PUT', '/plan', { body: { plan: 'gold' } });
      await expectStatus(bad, 400);
      expect(bad.text).toContain('plan');
      expect(bad.text).toContain('must be one of free, pro, enterprise');
      await expectStatus(await t.call('DELETE', '/plan'), 204);
      await expectStatus(await t.call('DELETE', '/plan'), 404);
      const doc = await t.call('GET', '/openapi.json');
      expect(Object.keys(doc.json.paths)).toContain('/plan');
    } finally {
      await t.stop();
    }
  });

  it('refuses a bad setting at start-up, naming the variable and the plugin', async () => {
    await expect(
      startTestService({ env: { PLAN_CLAIM_NAME: 'no spaces' }, definition: deployment }),
    ).rejects.toThrow('PLAN_CLAIM_NAME must be a claim name');
  });

  it('is served by the real entry when SERVICE_CONFIG names its deployment file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ids-example-'));
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const server = Bun.spawn([process.execPath, join(ROOT, 'entry/bun.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        SERVICE_CONFIG: 'examples/plan-claims/service.config.ts',
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dir,
        MASTER_KEY: '',
        DATABASE_URL: '',
        NATS_URL: '',
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
      },
      stderr: 'pipe',
      stdout: 'ignore',
    });
    try {
      let err = '';
      const reader = server.stderr.getReader();
      const deadline = Date.now() + 60_000;
      while (!/API-Key: (\S+)/.test(err) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        err += new TextDecoder().decode(value);
      }
      const orgId = /OrgID: (\S+)/.exec(err)?.[1];
      const key = /API-Key: (\S+)/.exec(err)?.[1];
      expect(key, `no development key on standard error:\n${err}`).toBeString();
      const headers = {
        'Service-OrgID': orgId!,
        'Service-API-Key': key!,
        'content-type': 'application/json',
      };
      const base = `http://127.0.0.1:${port}`;
      await expectStatus(
        await fetch(`${base}/plan`, { method: 'PUT', headers, body: JSON.stringify({ plan: 'enterprise' }) }),
        204,
      );
      const read = await fetch(`${base}/plan`, { headers });
      await expectStatus(read, 200);
      expect(await read.json()).toEqual({ result: { plan: 'enterprise' } });
    } finally {
      server.kill('SIGTERM');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
