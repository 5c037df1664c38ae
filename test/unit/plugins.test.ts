import { describe, expect, it } from 'bun:test';
import { Elysia } from 'elysia';
import { ConfigError } from '../../core/config.ts';
import { ok } from '../../core/http/envelope.ts';
import { defineCapability, definePlugin } from '../../core/plugin.ts';
import { selectPlugins } from '../../core/service.ts';
import { probePlugin } from '../helpers/probe-plugin.ts';
import { startTestService } from '../helpers/service.ts';

const greeter = defineCapability<{ greet(name: string): string }>('greeter');

const provider = definePlugin({
  id: 'provider',
  setup: () => ({ provides: [[greeter, { greet: (n: string) => `hello ${n}` }] as const] }),
});

const consumer = definePlugin({
  id: 'consumer',
  requires: ['provider'],
  setup: (ctx) => ({
    routes: new Elysia()
      .use(ctx.auth)
      .get('/greet', () => ok(ctx.capability(greeter)?.greet('acme') ?? 'nobody'), { apiKey: true }),
  }),
});

describe('the plugin contract', () => {
  it('composes enabled plugins: their tables, routes and workers', async () => {
    const state = { started: 0, stopped: 0 };
    const t = await startTestService({ definition: { plugins: [probePlugin(state)] } });
    try {
      expect(t.service.plugins).toEqual(['probe']);
      await t.service.start();
      expect(state.started).toBe(1);
      expect((await t.call('POST', '/probe/items', { body: { name: 'a' } })).status).toBe(201);
    } finally {
      await t.stop();
    }
    expect(state.stopped).toBe(1);
  });

  it('leaves no routes and no workers behind for a plugin PLUGINS switches off', async () => {
    const state = { started: 0, stopped: 0 };
    const t = await startTestService({
      env: { PLUGINS: 'provider' },
      definition: { plugins: [probePlugin(state), provider] },
    });
    try {
      await t.service.start();
      expect(t.service.plugins).toEqual(['provider']);
      expect(state.started).toBe(0);
      expect((await t.call('POST', '/probe/items', { body: { name: 'a' } })).status).toBe(404);
      const doc = await t.call('GET', '/openapi.json');
      expect(Object.keys(doc.json.paths)).not.toContain('/probe/items');
    } finally {
      await t.stop();
    }
  });

  it('lets a plugin use what another provides, through a capability', async () => {
    const t = await startTestService({ definition: { plugins: [provider, consumer] } });
    try {
      expect((await t.call('GET', '/greet')).json).toEqual({ result: 'hello acme' });
    } finally {
      await t.stop();
    }
  });

  it('stops start-up on an unknown plugin id or a missing requirement, naming PLUGINS', () => {
    expect(() => selectPlugins([provider, consumer], ['nope'])).toThrow(ConfigError);
    expect(() => selectPlugins([provider, consumer], ['nope'])).toThrow(
      'PLUGINS names unknown plugins nope; known: provider, consumer',
    );
    expect(() => selectPlugins([provider, consumer], ['consumer'])).toThrow(
      'PLUGINS enables consumer, which needs provider enabled too',
    );
    expect(selectPlugins([provider, consumer], undefined).map((p) => p.id)).toEqual(['provider', 'consumer']);
  });
});
