import { describe, expect, it } from 'bun:test';
import { Elysia } from 'elysia';
import * as v from 'valibot';
import { ConfigError } from '../../core/config.ts';
import { envInteger } from '../../core/contract/settings.ts';
import { ServiceError } from '../../core/errors.ts';
import { ok } from '../../core/http/envelope.ts';
import { defineCapability, defineHook, definePlugin } from '../../core/plugin.ts';
import { selectPlugins } from '../../core/service.ts';
import { beforeTokenIssued } from '../../core/tokens/before-token-issued.ts';
import { webhooks } from '../../plugins/webhooks/index.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { probePlugin } from '../helpers/probe-plugin.ts';
import { startTestService } from '../helpers/service.ts';
import { tokenIssuerPlugin } from '../helpers/token-issuer.ts';

const greeter = defineCapability<{ greet(name: string): string }>('greeter');

const provider = definePlugin({
  id: 'provider',
  provides: { greeter },
  setup: () => ({ provide: { greeter: { greet: (n: string) => `hello ${n}` } } }),
});

const consumer = definePlugin({
  id: 'consumer',
  requires: { greeter },
  setup: (ctx, { greeter }) => ({
    routes: new Elysia().use(ctx.auth).get('/greet', () => ok(greeter.greet('acme')), { apiKey: true }),
  }),
});

const issuer = tokenIssuerPlugin;

const claimsFrom = (id: string, claims: Record<string, string>, order?: number) =>
  definePlugin({
    id,
    setup: () => ({ attach: [beforeTokenIssued.attach({ run: () => ({ claims }), order })] }),
  });

describe('the plugin contract', () => {
  it('composes enabled plugins: their tables, routes and workers', async () => {
    const state = { started: 0, stopped: 0 };
    const t = await startTestService({ definition: { plugins: [probePlugin(state)] } });
    try {
      expect(t.service.plugins).toEqual(['probe']);
      await t.service.start();
      expect(state.started).toBe(1);
      await expectStatus(await t.call('POST', '/probe/items', { body: { name: 'a' } }), 201);
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
      await expectStatus(await t.call('POST', '/probe/items', { body: { name: 'a' } }), 404);
      const doc = await t.call('GET', '/openapi.json');
      expect(Object.keys(doc.json.paths)).not.toContain('/probe/items');
    } finally {
      await t.stop();
    }
  });

  it('hands a plugin the capabilities it requires, typed, whatever order the plugins are listed in', async () => {
    const t = await startTestService({ definition: { plugins: [consumer, provider] } });
    try {
      expect(t.service.plugins).toEqual(['provider', 'consumer']);
      expect((await t.call('GET', '/greet')).json).toEqual({ result: 'hello acme' });
      expect(t.service.ctx.capability(greeter)?.greet('x')).toBe('hello x');
    } finally {
      await t.stop();
    }
  });

  it('stops start-up on an unknown plugin id or a capability no enabled plugin provides', () => {
    expect(() => selectPlugins([provider, consumer], ['nope'])).toThrow(ConfigError);
    expect(() => selectPlugins([provider, consumer], ['nope'])).toThrow(
      'PLUGINS names unknown plugins nope; known: provider, consumer',
    );
    expect(() => selectPlugins([provider, consumer], ['consumer'])).toThrow(
      'PLUGINS enables consumer, which requires the greeter capability; provider provides it: enable provider too',
    );
    expect(() => selectPlugins([consumer], undefined)).toThrow('no plugin of service.config.ts provides it');
    expect(() => selectPlugins([provider, provider], undefined)).toThrow('lists plugin provider twice');
    expect(selectPlugins([provider, consumer], undefined).map((p) => p.id)).toEqual(['provider', 'consumer']);
  });

  it('refuses a setup that does not return an implementation of a capability it declares', async () => {
    const liar = definePlugin({
      id: 'liar',
      provides: { greeter },
      // @ts-expect-error: provide must carry greeter
      setup: () => ({ provide: {} }),
    });
    await expect(startTestService({ definition: { plugins: [liar] } })).rejects.toThrow(
      'plugin liar declares greeter in provides but its setup returned no implementation',
    );
  });

  it('runs the handlers attached to a hook point in order, and the caller folds their results', async () => {
    const t = await startTestService({
      definition: {
        plugins: [
          issuer,
          claimsFrom('late', { plan: 'pro', tier: 'late' }, 10),
          claimsFrom('early', { tier: 'early' }),
        ],
      },
    });
    try {
      const r = await t.call('POST', '/issue');
      await expectStatus(r, 200);
      // The early handler (order 0) runs first; the later one's tier wins the merge.
      expect(r.json.result).toEqual({ sub: 'pid:1', plan: 'pro', tier: 'late' });
    } finally {
      await t.stop();
    }
  });

  it('lets a handler block the hooked flow with its error, and skips handlers that do not match', async () => {
    const blocker = definePlugin({
      id: 'blocker',
      setup: () => ({
        attach: [
          beforeTokenIssued.attach({
            match: (draft) => draft.issuer === 'oauth2',
            run: () => ({ claims: { never: 'shown' } }),
          }),
          beforeTokenIssued.attach({
            run: () => {
              throw new ServiceError(403, 'TOKEN_BLOCKED', 'blocked by a hook');
            },
          }),
        ],
      }),
    });
    const t = await startTestService({ definition: { plugins: [issuer, blocker] } });
    try {
      const r = await t.call('POST', '/issue');
      await expectStatus(r, 403);
      expect(r.json.errors[0].message).toBe('blocked by a hook');
    } finally {
      await t.stop();
    }
  });

  it('types hook points end to end', () => {
    const point = defineHook<{ n: number }, string>('typed');
    point.attach({ run: (input) => String(input.n) });
    // @ts-expect-error: the handler must answer a string
    point.attach({ run: () => 1 });
    // @ts-expect-error: the input has no member m
    point.attach({ match: (input) => input.m > 0, run: () => 'x' });
    expect(point.name).toBe('typed');
  });

  it("reads a plugin's settings from the environment through its schema, typed", async () => {
    let seen: number | undefined;
    const tuned = definePlugin({
      id: 'tuned',
      settings: v.object({ TUNED_LIMIT: envInteger('TUNED_LIMIT', { min: 1, max: 100 }) }),
      setup: (ctx) => {
        seen = ctx.settings.TUNED_LIMIT;
        return {};
      },
    });
    const t = await startTestService({ env: { TUNED_LIMIT: '42' }, definition: { plugins: [tuned] } });
    await t.stop();
    expect(seen).toBe(42);
    await expect(
      startTestService({ env: { TUNED_LIMIT: '0' }, definition: { plugins: [tuned] } }),
    ).rejects.toThrow(
      'TUNED_LIMIT must be an integer from 1 to 100 (got "0") (a setting of the tuned plugin)',
    );
  });

  it('moves TEST_EVENTS_RATE_LIMIT to the webhooks plugin: it raises the limit, and a bad value stops start-up', async () => {
    await expect(
      startTestService({ env: { TEST_EVENTS_RATE_LIMIT: '0/50' }, definition: { plugins: [webhooks()] } }),
    ).rejects.toThrow('TEST_EVENTS_RATE_LIMIT must be <events a minute>/<burst>');
    const t = await startTestService({
      env: { TEST_EVENTS_RATE_LIMIT: '1/120' },
      definition: { plugins: [webhooks()] },
    });
    try {
      // 120 events pass at once (the default burst is 50); the 121st is limited.
      for (let i = 0; i < 3; i++)
        await expectStatus(
          await t.call('POST', '/test-events', { body: [{ event_name: 'PersonCreated_v1', count: 40 }] }),
          201,
        );
      await expectStatus(
        await t.call('POST', '/test-events', { body: [{ event_name: 'PersonCreated_v1' }] }),
        429,
      );
    } finally {
      await t.stop();
    }
  });
});
