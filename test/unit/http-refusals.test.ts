import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { connect } from 'node:net';
import { frontDoor } from '../../core/http/front-door.ts';
import { methodIndex } from '../../core/http/methods.ts';
import { createLogger } from '../../core/log.ts';
import serviceDefinition from '../../service.config.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { probePlugin } from '../helpers/probe-plugin.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const TIMEOUT_MS = 1000;
let t: TestService;
let server: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  t = await startTestService({
    env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) },
    definition: { plugins: [...serviceDefinition.plugins, probePlugin()] },
  });
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: t.service.fetch });
});
afterAll(async () => {
  server.stop(true);
  await t.stop();
});

interface RawAnswer {
  status: number;
  head: string;
  body: string;
  ms: number;
}

/** Sends raw bytes, keeps the socket open, and returns the first answer (or status 0 if none came). */
function raw(request: string, waitMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(server.port as number, '127.0.0.1');
    let data = '';
    const done = () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const ms = performance.now() - started;
      resolve({ status: Number(head.split(' ')[1] ?? 0), head: head.toLowerCase(), body: rest.join(''), ms });
    };
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
      // Stops at the end of a body announced by content-length.
      const length = /content-length: (\d+)/i.exec(data)?.[1];
      const split = data.indexOf('\r\n\r\n');
      if (length && split >= 0 && data.length - split - 4 >= Number(length)) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', done);
    socket.write(request);
    setTimeout(() => socket.destroy(), waitMs).unref();
  });
}

const authed = () =>
  `Host: localhost\r\nService-OrgID: ${t.org.id}\r\nService-API-Key: ${t.apiKey}\r\nConnection: close\r\n`;

describe('methods', () => {
  it.each([
    ['PROPFIND', '/organizations', 'GET, HEAD'],
    ['DELETE', '/organizations', 'GET, HEAD'],
    ['OPTIONS', '/organizations/webhooks/00000000-0000-0000-0000-000000000000', 'DELETE, GET, HEAD, PATCH'],
    ['GET', '/probe/items', 'POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    const r = await raw(`${method} ${path} HTTP/1.1\r\n${authed()}\r\n`);
    await expectStatus({ status: r.status, text: r.body }, 405);
    expect(r.head).toContain(`allow: ${allow.toLowerCase()}`);
    expect(JSON.parse(r.body).errors[0]).toEqual({
      httpcode: 405,
      message: `method ${method} is not allowed on ${path}; allowed: ${allow}`,
    });
  });

  it('answers a method nobody registered with 501, on any path', async () => {
    for (const path of ['/organizations', '/nowhere']) {
      const r = await raw(`PURGE ${path} HTTP/1.1\r\n${authed()}\r\n`);
      await expectStatus({ status: r.status, text: r.body }, 501);
      expect(JSON.parse(r.body).errors[0].message).toBe('method PURGE is not implemented by this service');
    }
  });

  it('still answers 404 for a path no route takes', async () => {
    const r = await raw(`PROPFIND /nowhere HTTP/1.1\r\n${authed()}\r\n`);
    await expectStatus({ status: r.status, text: r.body }, 404);
  });

  it('matches parameters, optional parameters and wildcards', () => {
    const allowed = methodIndex(() => [
      { method: 'GET', path: '/a/:id' },
      { method: 'PUT', path: '/b/:id?' },
      { method: 'POST', path: '/c/*' },
      { method: 'PATCH', path: '/d.e' },
    ]);
    expect(allowed('/a/1')).toEqual(['GET', 'HEAD']);
    expect(allowed('/a/1/2')).toEqual([]);
    expect(allowed('/b')).toEqual(['PUT']);
    expect(allowed('/b/x')).toEqual(['PUT']);
    expect(allowed('/c/x/y')).toEqual(['POST']);
    expect(allowed('/dxe')).toEqual([]);
  });
});

describe('request bodies', () => {
  it('answers a body that stops arriving with 408 after REQUEST_TIMEOUT_MS', async () => {
    const r = await raw(
      `POST /probe/items HTTP/1.1\r\n${authed()}content-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
    );
    await expectStatus({ status: r.status, text: r.body }, 408);
    expect(JSON.parse(r.body).errors[0].message).toBe(
      `the request body did not arrive within ${TIMEOUT_MS} ms (REQUEST_TIMEOUT_MS); send it whole and retry`,
    );
    expect(r.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(r.ms).toBeLessThan(TIMEOUT_MS + 2000);
  });

  it('answers a chunked body that stops arriving with 408 too', async () => {
    const r = await raw(
      `POST /probe/items HTTP/1.1\r\n${authed()}content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n3\r\n{"n\r\n`,
    );
    await expectStatus({ status: r.status, text: r.body }, 408);
  });

  it('lets a body that arrives in time through, however slowly it started', async () => {
    const body = '{"name":"slow-but-whole"}';
    const r = await raw(
      `POST /probe/items HTTP/1.1\r\n${authed()}content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    await expectStatus({ status: r.status, text: r.body }, 201);
  });

  it.each([
    [
      'text that is not JSON',
      'text/plain',
      'name=x',
      'request body must be JSON (it was sent as text/plain)',
    ],
    [
      'JSON cut short',
      'application/json',
      '{"name":',
      'request body must be JSON: it ends before the JSON value is complete',
    ],
    [
      'an empty body',
      'application/json',
      '',
      'request body must be JSON: it ends before the JSON value is complete',
    ],
  ])('answers %s with 400 "request body must be JSON"', async (_, type, body, message) => {
    const r = await t.call('POST', '/organizations/webhooks', {
      raw: body,
      headers: { 'content-type': type },
    });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toStartWith('request body must be JSON');
    if (!/position/.test(r.json.errors[0].message)) expect(r.json.errors[0].message).toBe(message);
  });
});

describe('answers without a body', () => {
  it('are built without one by the app, so every runtime can send them', async () => {
    const r = await t.service.app.handle(
      new Request('http://localhost/organizations/attributes/end_user_read_write', {
        method: 'PUT',
        headers: { ...headersOf(t), 'content-type': 'application/json' },
        body: '{"a":1}',
      }),
    );
    await expectStatus(r, 204);
    expect(r.body).toBeNull();
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('lose a body a handler gave them at the front door', async () => {
    const handle = frontDoor(async () => new Response('stray', { status: 204, headers: { 'x-a': '1' } }), {
      bodyLimit: 10,
      log: createLogger('silent'),
    });
    const r = await handle(new Request('http://localhost/x'));
    await expectStatus(r, 204);
    expect(r.body).toBeNull();
    expect(r.headers.get('x-a')).toBe('1');
  });
});

function headersOf(s: TestService): Record<string, string> {
  return { [s.names.orgId]: s.org.id, [s.names.apiKey]: s.apiKey };
}
