import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { connect } from 'node:net';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../../core/http/body-depth.ts';
import { frontDoor } from '../../core/http/front-door.ts';
import { urlPathOf } from '../../core/http/request-target.ts';
import { createLogger } from '../../core/log.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { probePlugin } from '../helpers/probe-plugin.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let t: TestService;
let server: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  t = await startTestService({ definition: { plugins: [probePlugin()] } });
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.service.fetch });
});
afterAll(async () => {
  server.stop(true);
  await t.stop();
});

/** Sends raw HTTP/1.0 bytes and returns the status and body of the answer (the server closes after it). */
function raw(request: string): Promise<{ status: number; body: string; head: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port as number, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
    socket.write(request);
    setTimeout(() => socket.end(), 3000).unref();
  });
}

const authed = () => `Service-OrgID: ${t.org.id}\r\nService-API-Key: ${t.apiKey}\r\nConnection: close\r\n`;

describe('the front door', () => {
  it.each([
    ['no Host value', 'Host:\r\n'],
    ['a Host with a slash', 'Host: a/b\r\n'],
    ['a Host with userinfo', 'Host: x@y\r\n'],
    ['a one-character Host', 'Host: a\r\n'],
    ['an unclosed IPv6 Host', 'Host: [::1\r\n'],
    ['a Host with a bad port', 'Host: localhost:99999\r\n'],
  ])('routes a request with %s and the server stays up', async (_, host) => {
    const r = await raw(`GET /organizations HTTP/1.0\r\n${host}${authed()}\r\n`);
    await expectStatus(r, 200);
    expect(JSON.parse(r.body).result.id).toBe(t.org.id);
    const unknown = await raw(`GET /nowhere?x=1 HTTP/1.0\r\n${host}${authed()}\r\n`);
    await expectStatus(unknown, 404);
    expect(JSON.parse(unknown.body).errors[0].message).toBe('no route for GET /nowhere');
  });

  it('answers an early refusal with the envelope and a request id', async () => {
    const big = await raw(
      `POST /probe/items HTTP/1.0\r\nHost: localhost\r\n${authed()}content-type: application/json\r\ncontent-length: 99999999\r\nx-request-id: big-1\r\n\r\n`,
    );
    await expectStatus(big, 413);
    expect(big.head.toLowerCase()).toContain('x-request-id: big-1');
    expect(JSON.parse(big.body).errors[0].httpcode).toBe(413);
  });
});

describe('declared lengths', () => {
  it('refuses a content-length that is not a number of bytes', async () => {
    const handle = frontDoor(async () => new Response('reached'), {
      bodyLimit: 100,
      log: createLogger('silent'),
    });
    const r = await handle(
      new Request('http://localhost/x', { method: 'POST', body: 'x', headers: { 'content-length': '1e1' } }),
    );
    await expectStatus(r, 400);
    expect((await r.json()).errors[0].message).toBe(
      'header content-length must be a non-negative integer number of bytes',
    );
  });
});

describe('empty bodies', () => {
  // Node's and Deno's servers hand a request that sent no body over with an empty stream, Bun with none.
  const emptyStream = () => new ReadableStream({ start: (c) => c.close() });
  // Deno's server: one empty chunk, then the end.
  const emptyChunk = () =>
    new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(0));
        c.close();
      },
    });
  const headers = () => ({
    [t.service.ctx.headers.orgId]: t.org.id,
    [t.service.ctx.headers.apiKey]: t.apiKey,
    'content-type': 'application/json',
  });

  it('are no body: a DELETE sent with a JSON content-type and nothing else succeeds', async () => {
    const url = 'http://localhost/probe/items/gone';
    for (const init of [
      { method: 'DELETE', headers: headers(), body: emptyStream(), duplex: 'half' },
      { method: 'DELETE', headers: headers(), body: emptyChunk(), duplex: 'half' },
      {
        method: 'DELETE',
        headers: { ...headers(), 'content-length': '0' },
        body: emptyStream(),
        duplex: 'half',
      },
      { method: 'DELETE', headers: headers() },
    ]) {
      const res = await t.service.fetch(new Request(url, init as RequestInit));
      expect({ status: res.status, text: await res.text() }).toEqual({ status: 204, text: '' });
    }
  });

  it('leave a route that needs a body its own message', async () => {
    const res = await t.service.fetch(
      new Request('http://localhost/probe/items', {
        method: 'POST',
        headers: headers(),
        body: emptyStream(),
        duplex: 'half',
      } as RequestInit),
    );
    const text = await res.text();
    expect({ status: res.status, text }).toMatchObject({ status: 400 });
    expect(text).toContain('body');
  });

  it('still stream a body of undeclared length through the limit', async () => {
    const chunks = ['{"name":', '"streamed"}'];
    const body = new ReadableStream({
      start(c) {
        for (const s of chunks) c.enqueue(new TextEncoder().encode(s));
        c.close();
      },
    });
    const res = await t.service.fetch(
      new Request('http://localhost/probe/items', {
        method: 'POST',
        headers: headers(),
        body,
        duplex: 'half',
      } as RequestInit),
    );
    const text = await res.text();
    expect({ status: res.status, text }).toMatchObject({ status: 201 });
  });
});

describe('JSON bodies', () => {
  const nested = (depth: number) => `${'['.repeat(depth - 1)}{"name":"deep"}${']'.repeat(depth - 1)}`;

  it('measures the nesting of arrays and objects', () => {
    const value = JSON.parse('{"a":[1,{"b":"[[[{{{"}]}');
    expect(nestsDeeperThan(value, 3)).toBe(false);
    expect(nestsDeeperThan(value, 2)).toBe(true);
    expect(nestsDeeperThan('[[[', 0)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(nested(5)), 4)).toBe(true);
  });

  it('refuses nesting deeper than the limit with 400, quickly', async () => {
    const started = performance.now();
    const r = await t.call('POST', '/probe/items', {
      raw: `{"name":"x","extra":${nested(100_000)}}`,
      headers: { 'content-type': 'application/json' },
    });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toBe(
      `request body nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels`,
    );
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('parses bodies at the limit and still names malformed JSON', async () => {
    const ok = await t.call('POST', '/probe/items', {
      raw: `{"name":"at-limit","extra":${nested(MAX_BODY_DEPTH - 1)}}`,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.status).not.toBe(500);
    expect(ok.json.errors?.[0]?.message ?? '').not.toContain('deeper than');
    const bad = await t.call('POST', '/probe/items', {
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toBe(
      'request body must be JSON: it ends before the JSON value is complete',
    );
  });
});

describe('request paths for logs', () => {
  it('never throws', () => {
    expect(urlPathOf('http://a/b/c?d=1')).toBe('/b/c');
    expect(urlPathOf('/organizations?x')).toBe('/organizations');
    expect(urlPathOf('http://[::1')).toBe('/');
    expect(urlPathOf('garbage')).toBe('/');
  });
});

describe('request logs', () => {
  it('log the status the client really got, a returned Response included', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('info', {}, (line) => lines.push(JSON.parse(line)));
    const handle = frontDoor(
      async () => new Response(null, { status: 304, headers: { 'x-request-id': 'r-1' } }),
      { bodyLimit: 10, log },
    );
    const r = await handle(new Request('http://localhost/x?y=1'));
    await expectStatus(r, 304);
    expect(lines).toEqual([
      expect.objectContaining({ msg: 'request', request_id: 'r-1', method: 'GET', path: '/x', status: 304 }),
    ]);
    await handle(
      new Request('http://localhost/x', {
        method: 'POST',
        body: 'x'.repeat(11),
        headers: { 'content-length': '11' },
      }),
    );
    expect(lines[1]).toEqual(expect.objectContaining({ path: '/x', status: 413 }));
  });
});
