import { afterEach, describe, expect, it } from 'bun:test';
import { connect } from 'node:net';
import { ServiceError } from '../../core/errors.ts';
import { consistentWrite } from '../../core/http/consistency.ts';
import { type DirectRoute, directRouteTable } from '../../core/http/direct-routes.ts';
import { frontDoor } from '../../core/http/front-door.ts';
import { headerNames } from '../../core/http/headers.ts';
import { setRequestOrg } from '../../core/http/request-facts.ts';
import { createLogger } from '../../core/log.ts';
import type { RequestObserver } from '../../core/metrics/http.ts';
import { expectStatus } from '../helpers/expect-status.ts';

type Line = Record<string, unknown>;

/** A front door with one direct route; the app behind it answers "app" so a test sees who answered. */
function door(route: Partial<DirectRoute>, o: { bodyLimit?: number; requestTimeoutMs?: number } = {}) {
  const lines: Line[] = [];
  const observed: Array<{ method: string; route: string | undefined; status: number }> = [];
  const requests: RequestObserver = {
    observe: (method, route, status) => observed.push({ method, route, status }),
  };
  const handle = frontDoor(async (request) => new Response(`app ${await request.text()}`), {
    bodyLimit: o.bodyLimit ?? 1024,
    requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
    log: createLogger('info', {}, (line) => lines.push(JSON.parse(line))),
    requests,
    direct: [
      {
        method: 'POST',
        path: '/hot',
        handle: (_request, body) => ({
          status: 200,
          headers: { 'content-type': 'text/plain' },
          body: `direct ${body}`,
        }),
        ...route,
      },
    ],
  });
  return { handle, lines, observed };
}

const post = (body: BodyInit, headers: Record<string, string> = {}, path = '/hot') =>
  new Request(`http://localhost${path}`, { method: 'POST', body, headers });

describe('direct routes', () => {
  it('answer their method and path ahead of the app, with a request id, a log line and metrics', async () => {
    const d = door({
      handle: async (request, body) => {
        setRequestOrg(request, 'org-1');
        return { status: 201, headers: { 'x-answer': 'yes' }, body: `direct ${body}` };
      },
    });
    const r = await d.handle(post('a=1', { 'content-length': '3', 'x-request-id': 'req-7' }));
    await expectStatus(r, 201);
    expect(await r.text()).toBe('direct a=1');
    expect(r.headers.get('x-answer')).toBe('yes');
    expect(r.headers.get('x-request-id')).toBe('req-7');
    expect(d.lines).toEqual([
      expect.objectContaining({
        msg: 'request',
        request_id: 'req-7',
        org_id: 'org-1',
        path: '/hot',
        status: 201,
      }),
    ]);
    expect(d.observed).toEqual([{ method: 'POST', route: '/hot', status: 201 }]);
  });

  it('give a fresh request id when the caller sends none or a bad one', async () => {
    const d = door({});
    const r = await d.handle(post('x', { 'content-length': '1', 'x-request-id': 'bad id!' }));
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('leave other methods, other paths and a trailing slash to the app', async () => {
    const d = door({});
    expect(await (await d.handle(post('x', { 'content-length': '1' }, '/other'))).text()).toBe('app x');
    expect(await (await d.handle(post('x', { 'content-length': '1' }, '/hot/'))).text()).toBe('app x');
    expect(await (await d.handle(new Request('http://localhost/hot'))).text()).toBe('app ');
  });

  it('leave a body without a declared length (chunked) to the app, which reads it as a stream', async () => {
    const d = door({});
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('streamed'));
        c.close();
      },
    });
    const r = await d.handle(post(stream));
    expect(await r.text()).toBe('app streamed');
  });

  it('leave a body over the limit to the app, which refuses it with 413', async () => {
    const d = door({}, { bodyLimit: 4 });
    const r = await d.handle(post('12345', { 'content-length': '5' }));
    await expectStatus(r, 413);
    expect((await r.json()).errors[0].httpcode).toBe(413);
  });

  it('answer a route that throws or rejects with the envelope 500, and log the error', async () => {
    for (const handle of [
      () => {
        throw new Error('boom');
      },
      () => Promise.reject(new Error('boom')),
    ]) {
      const d = door({ handle });
      const r = await d.handle(post('x', { 'content-length': '1' }));
      await expectStatus(r, 500);
      expect(await r.json()).toEqual({ errors: [{ httpcode: 500, message: 'internal error' }] });
      expect(r.headers.get('x-request-id')).toBeTruthy();
      expect(d.lines.find((l) => l.msg === 'request failed')).toEqual(
        expect.objectContaining({ level: 'error', path: '/hot' }),
      );
      expect(d.observed.at(-1)).toEqual({ method: 'POST', route: '/hot', status: 500 });
    }
  });

  it('answer a ServiceError as the app does: its status, message and headers, and no error log', async () => {
    const d = door({
      handle: () => {
        throw new ServiceError(429, 'SLOW_DOWN', 'too many grants', { headers: { 'retry-after': '7' } });
      },
    });
    const r = await d.handle(post('x', { 'content-length': '1' }));
    await expectStatus(r, 429);
    expect(await r.json()).toEqual({ errors: [{ httpcode: 429, message: 'too many grants' }] });
    expect(r.headers.get('retry-after')).toBe('7');
    expect(d.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(d.observed).toEqual([{ method: 'POST', route: '/hot', status: 429 }]);
  });

  it('answer 500 for an answer no Response can carry, rather than fail the request', async () => {
    const d = door({ handle: () => ({ status: 200, headers: { 'x-bad': 'line\nbreak' }, body: '' }) });
    const r = await d.handle(post('x', { 'content-length': '1' }));
    await expectStatus(r, 500);
    expect((await r.json()).errors[0].httpcode).toBe(500);
  });

  it('send no body with a status that has none', async () => {
    const d = door({ handle: () => ({ status: 204, headers: {}, body: 'ignored' }) });
    const r = await d.handle(post('', { 'content-length': '0' }));
    await expectStatus(r, 204);
    expect(await r.text()).toBe('');
  });

  it("count a consistent write's timeout from the request's arrival, as the app's routes do", async () => {
    const names = headerNames('Service');
    const d = door({
      handle: async (request) => {
        await new Promise((r) => setTimeout(r, 1100));
        await consistentWrite(request, names, async () => 'written');
        return { status: 204, headers: {}, body: '' };
      },
    });
    const r = await d.handle(
      post('', { 'content-length': '0', 'Service-Required-Consistency-Timeout': '1' }),
    );
    await expectStatus(r, 408);
    expect((await r.json()).errors[0].message).toContain('passed before the write could start');
  });

  it('refuse two routes on one method and path at start-up', () => {
    const route: DirectRoute = {
      method: 'POST',
      path: '/a',
      handle: () => ({ status: 200, headers: {}, body: '' }),
    };
    expect(() => directRouteTable([route, { ...route }])).toThrow('two direct routes answer POST /a');
  });
});

describe('a direct route over a socket', () => {
  let server: ReturnType<typeof Bun.serve> | undefined;
  afterEach(() => server?.stop(true));

  it('answers 408 when the declared body does not arrive in time', async () => {
    const d = door({}, { requestTimeoutMs: 300 });
    server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => d.handle(r) });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(server!.port as number, '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => {
        data += chunk;
        if (data.includes('\r\n\r\n')) resolve(data);
      });
      socket.on('error', reject);
      socket.write('POST /hot HTTP/1.1\r\nHost: localhost\r\ncontent-length: 10\r\n\r\nab');
      setTimeout(() => {
        socket.destroy();
        resolve(data);
      }, 5000).unref();
    });
    expect(answer.split(' ')[1]).toBe('408');
    expect(d.lines).toEqual([expect.objectContaining({ path: '/hot', status: 408 })]);
  });
});
