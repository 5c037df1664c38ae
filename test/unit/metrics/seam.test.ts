import { describe, expect, it } from 'bun:test';
import { Elysia } from 'elysia';
import { definePlugin, type Metrics, ok } from '../../../core/index.ts';
import { createNoMetrics } from '../../../core/metrics/no-op.ts';
import { createPrometheusMetrics } from '../../../core/metrics/prometheus.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { capturingLogger } from '../../helpers/mail.ts';
import { parsePrometheus } from '../../helpers/prometheus.ts';
import { startTestService } from '../../helpers/service.ts';

describe('the metrics seam', () => {
  it('writes counters, histograms and gauges in the Prometheus text format', async () => {
    const m = createPrometheusMetrics(capturingLogger());
    const lookups = m.counter({ name: 'demo_lookups_total', help: 'Lookups', labelNames: ['result'] });
    lookups.labels({ result: 'found' }).inc();
    lookups.labels({ result: 'found' }).inc(2);
    lookups.labels({ result: 'say "hi"\\' }).inc();
    const took = m.histogram({ name: 'demo_seconds', help: 'Time', buckets: [0.1, 1] });
    took.labels({}).observe(0.05);
    took.labels({}).observe(0.5);
    took.labels({}).observe(5);
    m.gauge({ name: 'demo_depth', help: 'Depth', labelNames: ['topic'] })
      .labels({ topic: 'a' })
      .set(7);

    const s = parsePrometheus(await m.text());
    expect(s.types.get('demo_lookups_total')).toBe('counter');
    expect(s.value('demo_lookups_total', { result: 'found' })).toBe(3);
    expect(s.value('demo_lookups_total', { result: 'say "hi"\\' })).toBe(1);
    expect(s.all('demo_seconds_bucket').map((b) => [b.labels.le, b.value])).toEqual([
      ['0.1', 1],
      ['1', 2],
      ['+Inf', 3],
    ]);
    expect(s.value('demo_seconds_sum')).toBeCloseTo(5.55);
    expect(s.value('demo_seconds_count')).toBe(3);
    expect(s.value('demo_depth', { topic: 'a' })).toBe(7);
    expect(m.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('keeps one series per set of values and one metric per name', () => {
    const m = createPrometheusMetrics(capturingLogger());
    const spec = { name: 'demo_total', help: 'Demo', labelNames: ['a', 'b'] } as const;
    const c = m.counter(spec);
    expect(c.labels({ a: '1', b: '2' })).toBe(c.labels({ a: '1', b: '2' }));
    expect(c.labels({ a: '1', b: '2' })).not.toBe(c.labels({ a: '12', b: '' }));
    expect(m.counter(spec)).toBe(c);
  });

  it('refuses, metrics on or off, a name or label Prometheus would not take, or one name made twice differently', () => {
    for (const m of [createPrometheusMetrics(capturingLogger()), createNoMetrics()]) {
      m.counter({ name: 'twice_total', help: 'x', labelNames: ['a'] });
      expect(() => m.counter({ name: 'twice_total', help: 'x', labelNames: ['b'] })).toThrow(
        'metric twice_total is made twice: as a counter with labels [a] and as a counter with labels [b]',
      );
      expect(() => m.gauge({ name: 'twice_total', help: 'x', labelNames: ['a'] })).toThrow('made twice');
      expect(() => m.counter({ name: 'Bad-Name_total', help: 'x' })).toThrow('metric name "Bad-Name_total"');
      expect(() => m.counter({ name: 'no_suffix', help: 'x' })).toThrow('must have a name ending in _total');
      expect(() => m.histogram({ name: 'h_seconds', help: 'x', labelNames: ['le'] })).toThrow(
        'label name "le"',
      );
      expect(() => m.gauge({ name: 'g', help: 'x', labelNames: ['__x'] })).toThrow('label name "__x"');
      expect(() => m.histogram({ name: 'h2_seconds', help: 'x', buckets: [1, 1] })).toThrow('increasing');
    }
  });

  it('does nothing with metrics off, through the same calls', () => {
    const m: Metrics = createNoMetrics();
    expect(m.enabled).toBe(false);
    const series = m.counter({ name: 'off_total', help: 'x', labelNames: ['a'] }).labels({ a: 'b' });
    series.inc();
    m.histogram({ name: 'off_seconds', help: 'x' }).labels({}).observe(1);
  });

  it('collects a gauge on every scrape; one whose collect fails is left out and logged, the rest served', async () => {
    const log = capturingLogger();
    const m = createPrometheusMetrics(log);
    let depth = 1;
    m.gauge({
      name: 'demo_queue',
      help: 'Depth',
      labelNames: ['topic'],
      collect: (set) => set({ topic: depth === 1 ? 'first' : 'second' }, depth),
    });
    m.gauge({
      name: 'demo_broken',
      help: 'Broken',
      collect: () => Promise.reject(new Error('database gone')),
    });
    expect(parsePrometheus(await m.text()).value('demo_queue', { topic: 'first' })).toBe(1);
    depth = 2;
    const second = parsePrometheus(await m.text());
    // A series the collect no longer sets is gone.
    expect(second.value('demo_queue', { topic: 'first' })).toBeUndefined();
    expect(second.value('demo_queue', { topic: 'second' })).toBe(2);
    expect(second.all('demo_broken')).toEqual([]);
    expect(log.lines.find((l) => l.metric === 'demo_broken')).toMatchObject({
      level: 'error',
      err: { message: 'database gone' },
    });
  });

  it("gives a plugin built on the public entry its own series, served beside the service's", async () => {
    const greetings = definePlugin({
      id: 'greetings',
      setup(ctx) {
        const greeted = ctx.metrics.counter({
          name: 'greetings_total',
          help: 'Greetings by language',
          labelNames: ['language'],
        });
        const english = greeted.labels({ language: 'en' });
        return {
          routes: new Elysia().get('/greetings', () => {
            english.inc();
            return ok('hello');
          }),
        };
      },
    });
    for (const env of [{ METRICS_PORT: '9464' }, {}]) {
      const t = await startTestService({ definition: { plugins: [greetings] }, env });
      try {
        await expectStatus(await t.call('GET', '/greetings'), 200);
        await expectStatus(await t.call('GET', '/greetings'), 200);
        expect(t.service.ctx.metrics.enabled).toBe('METRICS_PORT' in env);
        if (!t.service.metricsFetch) continue;
        const s = parsePrometheus(
          await (await t.service.metricsFetch(new Request('http://x/metrics'))).text(),
        );
        expect(s.value('greetings_total', { language: 'en' })).toBe(2);
        expect(
          s.value('identity_http_request_duration_seconds_count', { route: '/greetings', status: '200' }),
        ).toBe(2);
      } finally {
        await t.stop();
      }
    }
  });
});
