import { describe, expect, it } from 'bun:test';
import { createGate } from '../../adapters/fetch-delivery/gate.ts';
import { createFetchDelivery } from '../../adapters/fetch-delivery/index.ts';
import type { Transport } from '../../adapters/fetch-delivery/transport.ts';
import { createLogger } from '../../core/log.ts';

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

describe("the webhook timeout and the transport's own queue", () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** A transport that keeps each request queued for `queuedMs`, then answers after `wireMs`. */
  const transport = (queuedMs: number, wireMs: number): Transport => ({
    name: 'test',
    async send(request) {
      await sleep(queuedMs);
      request.admitted();
      await Promise.race([
        sleep(wireMs),
        new Promise((_, reject) =>
          request.signal.addEventListener('abort', () => reject(request.signal.reason)),
        ),
      ]);
      return { status: 204, headers: {}, body: new Uint8Array(), truncated: false };
    },
    close: async () => {},
  });
  const post = (t: Transport) =>
    createFetchDelivery({
      allowPrivate: ['127.0.0.0/8'],
      hostMap: { 'hooks.test': '127.0.0.1' },
      log: createLogger('silent'),
      transport: t,
    }).post({ url: 'https://hooks.test/h', headers: {}, body: 'x', timeoutMs: 100 });

  it('counts from when the request leaves the queue: a long wait there is not a timeout', async () => {
    expect(await post(transport(300, 10))).toMatchObject({ ok: true, status: 204 });
  });

  it('still times out a receiver slower than the timeout once the request is sent', async () => {
    expect(await post(transport(0, 300))).toMatchObject({ ok: false, errorKind: 'timeout' });
  });
});
