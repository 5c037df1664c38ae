import { describe, expect, it } from 'bun:test';
import { createGate } from '../../adapters/fetch-delivery/gate.ts';

const never = new AbortController().signal;
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('delivery gate', () => {
  it('admits up to its limit at once and hands a freed slot to the first waiter', async () => {
    const gate = createGate(2, 10_000);
    const first = await gate.enter(never);
    await gate.enter(never);
    const order: string[] = [];
    void gate.enter(never).then(() => order.push('third'));
    void gate.enter(never).then(() => order.push('fourth'));
    await tick();
    expect(order).toEqual([]);
    first();
    await tick();
    expect(order).toEqual(['third']);
    // Giving a slot back twice frees it once.
    first();
    await tick();
    expect(order).toEqual(['third']);
  });

  it('frees the slot of a request once it is older than youngMs, so slow requests hold no one back', async () => {
    const gate = createGate(1, 20);
    await gate.enter(never); // never given back: a slow receiver
    let admitted = false;
    void gate.enter(never).then(() => {
      admitted = true;
    });
    await tick();
    expect(admitted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(admitted).toBe(true);
  });

  it('rejects a waiter whose signal aborts, and it takes no slot', async () => {
    const gate = createGate(1, 10_000);
    const leave = await gate.enter(never);
    const controller = new AbortController();
    const waiting = gate.enter(controller.signal);
    controller.abort(new Error('timed out'));
    await expect(waiting).rejects.toThrow('timed out');
    leave();
    // The slot is free again: the next request enters at once.
    const next = await Promise.race([gate.enter(never).then(() => 'entered'), tick().then(() => 'waiting')]);
    expect(next).toBe('entered');
  });
});
