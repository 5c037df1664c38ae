import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { GuardedFetchError } from '../../core/ports/outbound-requests.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { type HttpsReceiver, startHttpsReceiver, testTls } from '../helpers/tls.ts';

/** The options a guarded-fetch case varies. */
export interface GuardedSetup {
  allowPrivate: string[];
  hostMap: Record<string, string>;
  extraCaPem?: string | undefined;
  maxResponseBytes?: number;
}

/** A request as the contract makes it: what crosses to a Node or Deno worker too. */
export interface GuardedCall {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as URLSearchParams, as oauth4webapi sends a token request. */
  form?: Record<string, string>;
}

/** The guarded fetch of a setup, as the contract calls it; the harness closes what it made. */
export interface GuardedHarness {
  make(setup: GuardedSetup): Promise<(url: string, call?: GuardedCall) => Promise<Response>>;
  cleanup(): Promise<void>;
}

async function route(request: Request): Promise<Response> {
  const path = new URL(request.url).pathname;
  if (path === '/moved') return new Response(null, { status: 302, headers: { location: '/elsewhere' } });
  if (path === '/big') return new Response('z'.repeat(4096));
  if (path === '/token')
    return Response.json(
      { form: await request.text(), type: request.headers.get('content-type') },
      { headers: { 'x-provider': 'yes' } },
    );
  return Response.json({
    method: request.method,
    host: request.headers.get('host'),
    authorization: request.headers.get('authorization'),
  });
}

/**
 * The guarded fetch (SSO providers' requests) on every runtime's transport: https only, vetted and
 * pinned, no redirect followed, a message without the network's detail.
 */
export function guardedFetchContract(name: string, makeHarness: () => Promise<GuardedHarness>) {
  describe(`guarded fetch: ${name}`, () => {
    let h: GuardedHarness;
    let receiver: HttpsReceiver;
    let closedPort: number;
    let fetch: (url: string, call?: GuardedCall) => Promise<Response>;
    const caPem = testTls().caPem;
    const hostMap = { 'hooks.test': '127.0.0.1' };
    const failure = (promise: Promise<Response>) =>
      promise.then(
        (res) => expect.unreachable(`expected a failure, got ${res.status}`),
        (e: unknown) =>
          e instanceof GuardedFetchError ? e : expect.unreachable(`not a GuardedFetchError: ${e}`),
      );

    beforeAll(async () => {
      h = await makeHarness();
      receiver = startHttpsReceiver(route);
      const gone = startHttpsReceiver(route);
      closedPort = gone.port;
      await gone.stop();
      fetch = await h.make({
        allowPrivate: ['127.0.0.0/8'],
        hostMap,
        extraCaPem: caPem,
        maxResponseBytes: 1024,
      });
    });
    afterAll(async () => {
      await h.cleanup();
      await receiver.stop();
    });

    it("GETs with the caller's headers and gives back the status, header fields and body", async () => {
      const res = await fetch(receiver.url('/who'), { headers: { authorization: 'Bearer t' } });
      await expectStatus(res, 200);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(await res.json()).toEqual({
        method: 'GET',
        host: `hooks.test:${receiver.port}`,
        authorization: 'Bearer t',
      });
    });

    it('POSTs a form as a token request does', async () => {
      const res = await fetch(receiver.url('/token'), {
        method: 'POST',
        form: { grant_type: 'x', code: 'c' },
      });
      expect(res.headers.get('x-provider')).toBe('yes');
      expect(await res.json()).toEqual({
        form: 'grant_type=x&code=c',
        type: 'application/x-www-form-urlencoded;charset=UTF-8',
      });
    });

    it('gives a redirect back as it is and follows none', async () => {
      receiver.requests.length = 0;
      const res = await fetch(receiver.url('/moved'));
      await expectStatus(res, 302);
      expect(res.headers.get('location')).toBe('/elsewhere');
      expect(receiver.requests.map((r) => r.path)).toEqual(['/moved']);
    });

    it('refuses a private address no allowance covers, telling the caller nothing of it', async () => {
      const strict = await h.make({ allowPrivate: [], hostMap, extraCaPem: caPem });
      receiver.requests.length = 0;
      for (const url of [receiver.url('/who'), `https://127.0.0.1:${receiver.port}/who`]) {
        const e = await failure(strict(url));
        expect(e.kind).toBe('ssrf_refused');
        expect(e.message).not.toMatch(/127\.0\.0\.1|private|loopback/);
      }
      expect(receiver.requests).toEqual([]);
    });

    it('refuses plain http', async () => {
      const e = await failure(fetch(`http://127.0.0.1:${receiver.port}/who`));
      expect(e.kind).toBe('invalid_url');
      expect(e.message).toBe('SSO providers are reached over HTTPS only, not http:');
    });

    it('fails without naming the port or the socket error when nothing listens', async () => {
      const e = await failure(fetch(receiver.url('/who').replace(String(receiver.port), String(closedPort))));
      expect(e.kind).toBe('connect');
      expect(e.message).not.toMatch(/ECONNREFUSED|refused|127\.0\.0\.1/i);
      expect(e.message).not.toContain(String(closedPort));
    });

    it('fails on a certificate it does not trust', async () => {
      const untrusting = await h.make({ allowPrivate: ['127.0.0.0/8'], hostMap });
      const e = await failure(untrusting(receiver.url('/who')));
      expect(e.kind).toBe('tls');
      expect(e.message).not.toMatch(/cert|self.signed|TLS/i);
    });

    it('fails on an answer larger than it reads', async () => {
      expect((await failure(fetch(receiver.url('/big')))).kind).toBe('response_too_large');
    });
  });
}
