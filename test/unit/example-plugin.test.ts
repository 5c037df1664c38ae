import { describe, expect, it } from 'bun:test';
import { planLookup } from '@identity-service-examples/plan-claims';
import deployment from '@identity-service-examples/plan-claims/service.config';
import { expectStatus } from '../helpers/expect-status.ts';
import { startRealEntry } from '../helpers/real-entry.ts';
import { startTestService } from '../helpers/service.ts';
import { tokenIssuerPlugin } from '../helpers/token-issuer.ts';

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
    const { base, headers, stop } = await startRealEntry('examples/plan-claims/service.config.ts');
    try {
      await expectStatus(
        await fetch(`${base}/plan`, { method: 'PUT', headers, body: JSON.stringify({ plan: 'enterprise' }) }),
        204,
      );
      const read = await fetch(`${base}/plan`, { headers });
      await expectStatus(read, 200);
      expect(await read.json()).toEqual({ result: { plan: 'enterprise' } });
    } finally {
      await stop();
    }
  }, 90_000);
});
