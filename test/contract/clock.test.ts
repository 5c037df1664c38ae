import { describe, expect, it } from 'bun:test';
import { scaledClock, systemClock } from '../../adapters/clock/system.ts';
import type { Clock } from '../../core/ports/clock.ts';
import { realMs } from '../../core/ports/clock.ts';

function clockContract(name: string, make: () => Clock) {
  describe(`Clock contract: ${name}`, () => {
    it('sleeps at least the asked time on its own scale', async () => {
      const c = make();
      const t0 = c.now();
      await c.sleep(2000 * (c.rate > 1 ? 1 : 0.05));
      expect(c.now() - t0).toBeGreaterThanOrEqual(2000 * (c.rate > 1 ? 1 : 0.05) - 5);
    });

    it('stops sleeping when the signal aborts', async () => {
      const c = make();
      const ac = new AbortController();
      const started = Date.now();
      const p = c.sleep(60_000 * c.rate, ac.signal);
      setTimeout(() => ac.abort(new Error('stop')), 20);
      await expect(p).rejects.toThrow('stop');
      expect(Date.now() - started).toBeLessThan(1000);
    });

    it('converts its durations to real milliseconds', () => {
      const c = make();
      expect(realMs(c, 60_000)).toBe(Math.ceil(60_000 / c.rate));
    });
  });
}

clockContract('system', () => systemClock);
clockContract('scaled x1000', () => scaledClock(1000));

describe('scaled clock', () => {
  it('passes a 30-minute window in under 3 real seconds at x1000', async () => {
    const c = scaledClock(1000);
    const started = Date.now();
    const t0 = c.now();
    await c.sleep(30 * 60_000);
    expect(c.now() - t0).toBeGreaterThanOrEqual(30 * 60_000 - 50);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
