import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { HttpDelivery } from '../../core/ports/http-delivery.ts';
import {
  type HttpsReceiver,
  type RawTlsReceiver,
  startHttpsReceiver,
  startRawTlsReceiver,
  testTls,
} from '../helpers/tls.ts';

/** The adapter options a contract case varies. */
export interface DeliverySetup {
  allowPrivate: string[];
  hostMap: Record<string, string>;
  extraCaPem?: string | undefined;
  maxResponseBytes?: number;
}

/** Makes a delivery for a setup; the harness closes everything it made in `cleanup`. */
export interface DeliveryHarness {
  make(setup: DeliverySetup): Promise<HttpDelivery>;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';

// One receiver, one route per behaviour.
async function route(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path.endsWith('/fail')) return new Response('broken', { status: 500 });
  if (path.endsWith('/redirect')) return new Response(null, { status: 302, headers: { location: '/moved' } });
  if (path.endsWith('/slow')) return sleep(3_000).then(() => new Response('late'));
  if (path.endsWith('/stall'))
    return new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('partial')) }));
  if (path.endsWith('/endless'))
    return new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(16_384).fill(120)) }));
  if (path.endsWith('/kib'))
    return new Response('y'.repeat(Number(new URL(request.url).searchParams.get('n')) * 1024));
  return new Response(`accepted ${await request.text()}`, { status: 202 });
}

/** The HttpDelivery contract: every runtime's transport passes it unchanged. */
export function httpDeliveryContract(name: string, makeHarness: () => Promise<DeliveryHarness>) {
  describe(`HttpDelivery contract: ${name}`, () => {
    let h: DeliveryHarness;
    let receiver: HttpsReceiver;
    let raw: RawTlsReceiver;
    let rawAnswer = '';
    let trusted: HttpDelivery;
    let closedPort: number;
    const caPem = testTls().caPem;
    const hostMap = { 'hooks.test': '127.0.0.1', 'a.hooks.test': '127.0.0.1', 'other.example': '127.0.0.1' };
    const post = (
      d: HttpDelivery,
      url: string,
      extra: { timeoutMs?: number; maxResponseBytes?: number } = {},
    ) =>
      d.post({ url, headers: { 'content-type': 'application/jwt' }, body: jwt, timeoutMs: 5_000, ...extra });
    const seen = (path: string) => receiver.requests.filter((r) => r.path.startsWith(path));

    beforeAll(async () => {
      h = await makeHarness();
      receiver = startHttpsReceiver(route);
      raw = await startRawTlsReceiver(() => rawAnswer);
      const gone = startHttpsReceiver(route);
      closedPort = gone.port;
      await gone.stop();
      trusted = await h.make({ allowPrivate: ['127.0.0.0/8'], hostMap, extraCaPem: caPem });
    });
    afterAll(async () => {
      await h.cleanup();
      await receiver.stop();
      await raw.stop();
    });

    it('delivers the POST and reports a 2xx answer as ok, with its body and the address it pinned', async () => {
      const result = await post(trusted, receiver.url('/ok/1'));
      expect(result).toMatchObject({ ok: true, status: 202, body: `accepted ${jwt}`, address: '127.0.0.1' });
      expect(result.errorKind).toBeUndefined();
      expect(result.latencyMs).toBeGreaterThan(0);
      expect(seen('/ok/1')).toMatchObject([{ method: 'POST', body: jwt }]);
      expect(seen('/ok/1')[0]!.headers.get('content-type')).toBe('application/jwt');
    });

    it("sends the caller's headers, an array as one comma-joined field, and a user-agent", async () => {
      await trusted.post({
        url: receiver.url('/headers?x=1'),
        headers: { 'content-type': 'application/jwt', 'X-Custom': 'one', 'x-multi': ['a', 'b'] },
        body: jwt,
        timeoutMs: 5_000,
      });
      const [request] = seen('/headers');
      expect(request?.path).toBe('/headers?x=1');
      expect(request?.headers.get('x-custom')).toBe('one');
      expect(request?.headers.get('x-multi')).toBe('a, b');
      expect(request?.headers.get('user-agent')).toMatch(/^identity-service-webhooks\//);
    });

    it('presents the hostname as Host and SNI, and verifies the certificate against it', async () => {
      await post(trusted, receiver.url('/host', 'a.hooks.test'));
      expect(seen('/host')[0]?.headers.get('host')).toBe(`a.hooks.test:${receiver.port}`);
      rawAnswer = 'HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n';
      const result = await post(trusted, `https://hooks.test:${raw.port}/sni`);
      expect(result).toMatchObject({ ok: true, status: 204 });
      expect(raw.serverNames.at(-1)).toBe('hooks.test');
    });

    it('reports a 500 as not ok, with its status and body', async () => {
      expect(await post(trusted, receiver.url('/fail'))).toMatchObject({
        ok: false,
        status: 500,
        body: 'broken',
      });
    });

    it('returns a redirect as not ok and never follows it', async () => {
      const result = await post(trusted, receiver.url('/r/redirect'));
      expect(result).toMatchObject({ ok: false, status: 302 });
      expect(seen('/moved')).toEqual([]);
    });

    it('does not count an unrequested 101 as success', async () => {
      rawAnswer = 'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: websocket\r\n\r\n';
      const result = await post(trusted, `https://hooks.test:${raw.port}/upgrade`);
      expect(result.ok).toBe(false);
    });

    it('answers with timeout when the receiver is slower than timeoutMs', async () => {
      const result = await post(trusted, receiver.url('/t/slow'), { timeoutMs: 400 });
      expect(result).toMatchObject({ ok: false, errorKind: 'timeout' });
      expect(result.latencyMs).toBeGreaterThanOrEqual(380);
      expect(result.latencyMs).toBeLessThan(1_400);
      expect(result.error).toContain('400 ms');
    });

    it('counts the body in the timeout: headers then a stalled body time out', async () => {
      const result = await post(trusted, receiver.url('/t/stall'), { timeoutMs: 400 });
      expect(result).toMatchObject({ ok: false, errorKind: 'timeout' });
      expect(result.latencyMs).toBeLessThan(1_400);
    });

    it('stops reading an endless body at maxResponseBytes and says it was too large', async () => {
      const result = await post(trusted, receiver.url('/endless'), {
        maxResponseBytes: 1_000,
        timeoutMs: 4_000,
      });
      expect(result).toMatchObject({ ok: true, status: 200, errorKind: 'response_too_large' });
      expect(result.body.length).toBe(1_000);
      expect(result.latencyMs).toBeLessThan(2_000);
    });

    it('keeps 64 KiB by default, and a body of exactly the cap is not too large', async () => {
      const big = await post(trusted, receiver.url('/kib?n=100'));
      expect(big).toMatchObject({ status: 200, errorKind: 'response_too_large' });
      expect(big.body.length).toBe(65_536);
      const exact = await post(trusted, receiver.url('/kib?n=2'), { maxResponseBytes: 2_048 });
      expect(exact.errorKind).toBeUndefined();
      expect(exact.body.length).toBe(2_048);
    });

    it('refuses a name that resolves to a private address unless allowPrivate names it', async () => {
      const strict = await h.make({ allowPrivate: [], hostMap, extraCaPem: caPem });
      const result = await post(strict, receiver.url('/refused'));
      expect(result).toMatchObject({ ok: false, errorKind: 'ssrf_refused' });
      expect(result.error).toContain('resolves to a refused (non-public) address');
      expect(result.error).not.toContain('127.0.0.1');
      expect(seen('/refused')).toEqual([]);
      const viaDns = await post(strict, `https://localhost:${receiver.port}/refused`);
      expect(viaDns).toMatchObject({ ok: false, errorKind: 'ssrf_refused' });
    });

    it('refuses IP-literal URLs in private ranges, whatever the spelling', async () => {
      const strict = await h.make({ allowPrivate: [], hostMap: {}, extraCaPem: caPem });
      const p = receiver.port;
      for (const host of [
        '127.0.0.1',
        '0x7f.1',
        '2130706433',
        '[::1]',
        '[::ffff:7f00:1]',
        '10.0.0.1',
        '169.254.169.254',
      ])
        expect(await post(strict, `https://${host}:${p}/literal`)).toMatchObject({
          errorKind: 'ssrf_refused',
        });
      expect(seen('/literal')).toEqual([]);
    });

    it('fails with tls when the certificate authority is unknown or the name does not match', async () => {
      const untrusting = await h.make({ allowPrivate: ['127.0.0.0/8'], hostMap });
      expect(await post(untrusting, receiver.url('/tls'))).toMatchObject({ ok: false, errorKind: 'tls' });
      expect(await post(trusted, receiver.url('/tls', 'other.example'))).toMatchObject({ errorKind: 'tls' });
      expect(seen('/tls')).toEqual([]);
    });

    it('refuses http:, credentials and non-URLs as invalid_url', async () => {
      expect(await post(trusted, `http://hooks.test:${receiver.port}/`)).toMatchObject({
        errorKind: 'invalid_url',
      });
      expect(await post(trusted, receiver.url('/').replace('//', '//u:p@'))).toMatchObject({
        errorKind: 'invalid_url',
      });
      expect(await post(trusted, 'not a url')).toMatchObject({ ok: false, errorKind: 'invalid_url' });
    });

    it('reports a name that does not resolve as dns, and a closed port as connect', async () => {
      expect(await post(trusted, 'https://no-such-host.invalid/')).toMatchObject({
        ok: false,
        errorKind: 'dns',
      });
      expect(await post(trusted, `https://hooks.test:${closedPort}/`)).toMatchObject({
        errorKind: 'connect',
      });
    });

    it('never throws, even for a header it cannot send', async () => {
      const result = await trusted.post({
        url: receiver.url('/bad-header'),
        headers: { 'x-bad': 'line\r\nbreak' },
        body: '',
        timeoutMs: 1_000,
      });
      expect(result).toMatchObject({ ok: false, errorKind: 'invalid_url' });
      expect(result.error).toContain('x-bad');
      expect(result.error).not.toContain('line'); // header values can be secrets: never echoed
      expect(seen('/bad-header')).toEqual([]);
    });
  });
}
