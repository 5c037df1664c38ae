import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { withConsistency } from '../../core/http/consistency.ts';
import { expectStatus } from '../helpers/expect-status.ts';
import { probePlugin } from '../helpers/probe-plugin.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let t: TestService;
beforeAll(async () => {
  t = await startTestService({ definition: { plugins: [probePlugin()] } });
});
afterAll(async () => {
  await t.stop();
});

describe('the organization guard', () => {
  it('answers the organization of a valid key with the envelope', async () => {
    const r = await t.call('GET', '/organizations');
    await expectStatus(r, 200);
    expect(r.json).toEqual({
      result: { id: t.org.id, org_name: 'Acme', tenant_name: 'Acme', created_at: expect.any(String) },
    });
  });

  it('answers 401 without an API key, naming the header', async () => {
    const r = await t.call('GET', '/organizations', { key: null });
    await expectStatus(r, 401);
    expect(r.json).toEqual({ errors: [{ httpcode: 401, message: 'header Service-API-Key is required' }] });
  });

  it('answers 401 for a key that is not valid, however it is spelled', async () => {
    for (const key of [
      'nope',
      `isk_${'0'.repeat(32)}${'A'.repeat(43)}`,
      `${t.apiKey.slice(0, -1)}${t.apiKey.endsWith('A') ? 'B' : 'A'}`,
    ]) {
      const r = await t.call('GET', '/organizations', { key });
      await expectStatus(r, 401);
      expect(r.json.errors[0].message).toContain('not a valid API key');
    }
  });

  it("answers 403 for a key of another organization and never shows the other's data", async () => {
    const other = await t.service.ctx.orgs.create('Other');
    const r = await t.call('GET', '/organizations', { key: other.apiKey });
    await expectStatus(r, 403);
    expect(r.text).not.toContain('Other');
    expect(r.json.errors[0].httpcode).toBe(403);
  });

  it('answers 400 when the organization header is missing or not an ID', async () => {
    expect((await t.call('GET', '/organizations', { orgId: null })).json).toEqual({
      errors: [{ httpcode: 400, message: 'header Service-OrgID is required' }],
    });
    const r = await t.call('GET', '/organizations', { orgId: 'acme' });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toContain('must be an organization ID');
  });

  it('answers 401 or 403 before it validates the body, so a caller without a key learns no schema', async () => {
    const bad = { body: { name: '', count: 11.5 } };
    const other = await t.service.ctx.orgs.create('Other');
    const cases: Array<[number, Record<string, unknown>]> = [
      [401, { key: null }],
      [401, { key: 'nope' }],
      [403, { key: other.apiKey }],
      [400, {}],
    ];
    for (const [status, o] of cases) {
      const r = await t.call('POST', '/probe/items', { ...bad, ...o });
      await expectStatus(r, status);
      if (status !== 400) expect(r.text).not.toContain('body.');
    }
    // A body that must be an object and is an array: the route's own transform comes after the guard too.
    await expectStatus(await t.call('POST', '/probe/items', { body: [], key: null }), 401);
  });

  it('reads header names case-insensitively', async () => {
    const res = await t.service.app.handle(
      new Request('http://localhost/organizations', {
        headers: { 'service-orgid': t.org.id, 'SERVICE-API-KEY': t.apiKey },
      }),
    );
    await expectStatus(res, 200);
  });

  it('stops accepting a key once rotated away', async () => {
    const org = await t.service.ctx.orgs.create('Rotating');
    const { apiKey: fresh } = await t.service.ctx.orgs.rotateKey(org.organization.id);
    expect(
      (await t.call('GET', '/organizations', { orgId: org.organization.id, key: org.apiKey })).status,
    ).toBe(401);
    await expectStatus(
      await t.call('GET', '/organizations', { orgId: org.organization.id, key: fresh }),
      200,
    );
  });
});

describe('errors and the envelope', () => {
  it('answers an unknown route with a JSON 404', async () => {
    const r = await t.call('GET', '/no/such/route');
    await expectStatus(r, 404);
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(r.json).toEqual({ errors: [{ httpcode: 404, message: 'no route for GET /no/such/route' }] });
  });

  it('answers validation failures with 400 (never 422), naming each field and rule', async () => {
    const r = await t.call('POST', '/probe/items', { body: { name: '', count: 11.5 } });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toContain('body.name: must not be empty');
    expect(r.json.errors[0].message).toContain('body.count: must be an integer');
    expect(r.json.errors[0].message).toContain('body.count: must be at most 10');
  });

  it("names a missing required field and says it is required, in words not the validator's", async () => {
    const r = await t.call('POST', '/probe/items', { body: {} });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toBe('body.name: is required');
  });

  it('answers malformed JSON with 400', async () => {
    const r = await t.call('POST', '/probe/items', {
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toBe(
      'request body must be JSON: it ends before the JSON value is complete',
    );
  });

  it('answers a body over the limit with 413, declared or streamed', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    const r = await t.call('POST', '/probe/items', {
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    await expectStatus(r, 413);
    expect(r.json.errors[0].message).toBe('request body is larger than the limit of 1048576 bytes');
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await t.service.fetch(
      new Request('http://localhost/probe/items', {
        method: 'POST',
        body: stream,
        headers: {
          'content-type': 'application/json',
          'Service-OrgID': t.org.id,
          'Service-API-Key': t.apiKey,
        },
        duplex: 'half',
      } as RequestInit),
    );
    await expectStatus(res, 413);
  });

  it('gives every response a request id, echoing a sane one', async () => {
    const mine = await t.call('GET', '/organizations', { headers: { 'x-request-id': 'abc-123' } });
    expect(mine.headers.get('x-request-id')).toBe('abc-123');
    const generated = await t.call('GET', '/nowhere');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const hostile = await t.call('GET', '/organizations', { headers: { 'x-request-id': 'a b\u00e9' } });
    expect(hostile.headers.get('x-request-id')).not.toBe('a b\u00e9');
  });
});

describe('consistency headers', () => {
  it('accepts both levels and a timeout of 1 to 120 seconds', async () => {
    for (const [level, timeout] of [
      ['local_region', '1'],
      ['all_regions', '120'],
    ]) {
      const r = await t.call('POST', '/probe/items', {
        body: { name: `ok-${level}` },
        headers: { 'Service-Required-Consistency': level!, 'Service-Required-Consistency-Timeout': timeout! },
      });
      await expectStatus(r, 201);
    }
  });

  it.each([
    [
      'Service-Required-Consistency',
      'everywhere',
      'header Service-Required-Consistency must be local_region or all_regions',
    ],
    ['Service-Required-Consistency-Timeout', '0', 'must be an integer number of seconds from 1 to 120'],
    ['Service-Required-Consistency-Timeout', '121', 'must be an integer number of seconds from 1 to 120'],
    ['Service-Required-Consistency-Timeout', '2.5', 'must be an integer number of seconds from 1 to 120'],
    ['Service-Required-Consistency-Timeout', 'soon', 'must be an integer number of seconds from 1 to 120'],
  ])('answers 400 for %s: %s', async (header, value, message) => {
    const r = await t.call('POST', '/probe/items', {
      body: { name: `bad-${value}` },
      headers: { [header]: value },
    });
    await expectStatus(r, 400);
    expect(r.json.errors[0].message).toContain(message);
    const stored = await t.call('GET', `/probe/items/bad-${value}`);
    expect(stored.json.result).toBeNull();
  });

  it('answers 408 without writing when the timeout passed before the write could start', async () => {
    let wrote = false;
    const late = withConsistency(
      { level: 'local_region', timeoutMs: 1000 },
      async () => {
        wrote = true;
      },
      performance.now() - 1500,
    );
    await expect(late).rejects.toThrow('passed before the write could start; nothing was written');
    expect(wrote).toBe(false);
  });

  it('checks them only once the caller and the route are known', async () => {
    const headers = { 'Service-Required-Consistency': 'everywhere' };
    const noKey = await t.call('POST', '/probe/items', { body: { name: 'x' }, headers, key: null });
    await expectStatus(noKey, 401);
    const noRoute = await t.call('POST', '/no/such/route', { body: {}, headers });
    await expectStatus(noRoute, 404);
  });

  it('answers 408 past the timeout, and the write may still land', async () => {
    const started = Date.now();
    const r = await t.call('POST', '/probe/items', {
      body: { name: 'slow', slow_ms: 1800 },
      headers: { 'Service-Required-Consistency-Timeout': '1' },
    });
    await expectStatus(r, 408);
    expect(Date.now() - started).toBeLessThan(1700);
    expect(r.json.errors[0].message).toContain('may still be applied');
    const until = Date.now() + 5000;
    let landed = false;
    while (!landed && Date.now() < until) {
      const rows = await t.service.ctx.storage.query(sql`select 1 from probe_items where name = 'slow'`);
      landed = rows.length === 1;
      if (!landed) await new Promise((res) => setTimeout(res, 50));
    }
    expect(landed).toBe(true);
  });
});

describe('operations endpoints', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await t.call('GET', '/healthz')).json).toEqual({ result: { status: 'ok' } });
    const ready = await t.call('GET', '/readyz');
    await expectStatus(ready, 200);
    expect(ready.json.result.checks).toEqual({ storage: 'ok', bus: 'ok' });
  });

  it('answers /readyz with 503 while draining, and goes on serving', async () => {
    const other = await startTestService();
    try {
      other.service.drain();
      const r = await other.call('GET', '/readyz');
      await expectStatus(r, 503);
      expect(r.json.result.checks).toEqual({ storage: 'ok', bus: 'ok', shutdown: 'stopping' });
      await expectStatus(await other.call('GET', '/organizations'), 200);
    } finally {
      await other.stop();
    }
  });

  it('answers /readyz with 503 and the failing checks once the service stops', async () => {
    const other = await startTestService();
    await other.service.stop();
    const r = await other.call('GET', '/readyz');
    await expectStatus(r, 503);
    expect(r.json.result.status).toBe('not ready');
    expect(r.json.result.checks.shutdown).toBe('stopping');
    expect(r.json.errors[0].httpcode).toBe(503);
  });

  it('serves an OpenAPI 3.1 document generated from the routes, and a docs page', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    expect(doc.json.openapi).toStartWith('3.1');
    expect(Object.keys(doc.json.paths)).toEqual(
      expect.arrayContaining(['/organizations', '/probe/items', '/healthz', '/readyz']),
    );
    const body = doc.json.paths['/probe/items'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name']);
    expect(body.properties.name.maxLength).toBe(20);
    const docs = await t.call('GET', '/docs');
    await expectStatus(docs, 200);
    expect(docs.text).toContain('<div id="swagger-ui">');
  });

  it('serves the docs page and every file it loads itself, from the installed package', async () => {
    const page = await t.call('GET', '/docs');
    await expectStatus(page, 200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const refs = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      // Same origin: no scheme, no host, not protocol-relative.
      expect(ref).not.toMatch(/^[a-z][a-z0-9+.-]*:|^\/\//i);
      const url = new URL(ref, 'http://localhost/docs');
      const file = await t.call('GET', url.pathname);
      await expectStatus(file, 200);
      expect(file.headers.get('content-type')).toMatch(
        ref.endsWith('.css') ? /^text\/css/ : /^text\/javascript/,
      );
      expect(file.text.length).toBeGreaterThan(100);
    }
    const start = await t.call('GET', '/docs/start.js');
    expect(start.text).toContain("url: 'openapi.json'");
    expect(start.text).toContain('validatorUrl: null');
  });
});
