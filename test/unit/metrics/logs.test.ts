import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { Elysia } from 'elysia';
import { definePlugin, ok } from '../../../core/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { capturingLogger } from '../../helpers/mail.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

/** Routes that answer, answer for an organization without a key, or fail with a 500 once authenticated. */
const probe = definePlugin({
  id: 'log-probe',
  setup: (ctx) => ({
    routes: new Elysia()
      .use(ctx.auth)
      .get('/log-probe/public', () => ok('public'), { orgOnly: true })
      .get(
        '/log-probe/boom',
        () => {
          throw new Error('kaput');
        },
        { apiKey: true },
      ),
  }),
});

describe('the JSON log lines of a request', () => {
  let t: TestService;
  const log = capturingLogger();

  beforeAll(async () => {
    t = await startTestService({ definition: { plugins: [probe] }, log });
  });
  afterAll(() => t.stop());

  /** The lines written while handling the request that answered with this request id. */
  const linesOf = (res: { headers: Headers }) => {
    const id = res.headers.get('x-request-id');
    expect(id).toBeTruthy();
    return log.lines.filter((l) => l.request_id === id);
  };
  const requestLine = (res: { headers: Headers }) => {
    const lines = linesOf(res).filter((l) => l.msg === 'request');
    expect(lines).toHaveLength(1);
    return lines[0]!;
  };

  it('carries the request id and the organization of an authenticated request', async () => {
    const res = await t.call('GET', '/organizations');
    await expectStatus(res, 200);
    expect(requestLine(res)).toMatchObject({
      level: 'info',
      request_id: res.headers.get('x-request-id'),
      org_id: t.org.id,
      method: 'GET',
      path: '/organizations',
      status: 200,
    });
  });

  it('carries the organization a route takes by Service-OrgID alone', async () => {
    const res = await t.call('GET', '/log-probe/public', { key: null });
    await expectStatus(res, 200);
    expect(requestLine(res)).toMatchObject({ org_id: t.org.id, status: 200 });
  });

  it('has no org_id while no organization is authenticated: a wrong key, an unknown route', async () => {
    const refused = await t.call('GET', '/organizations', { key: 'isk_not-a-key' });
    await expectStatus(refused, 401);
    const unknown = await t.call('GET', '/nowhere', { key: null, orgId: null });
    await expectStatus(unknown, 404);
    for (const res of [refused, unknown]) {
      const line = requestLine(res);
      expect(line.request_id).toBe(res.headers.get('x-request-id')!);
      expect(line).not.toHaveProperty('org_id');
    }
  });

  it("logs the caller's own request id when it is sane", async () => {
    const res = await t.call('GET', '/organizations', { headers: { 'x-request-id': 'trace-42.a:b' } });
    await expectStatus(res, 200);
    expect(res.headers.get('x-request-id')).toBe('trace-42.a:b');
    expect(requestLine(res)).toMatchObject({ request_id: 'trace-42.a:b', org_id: t.org.id });
  });

  it('writes the error line of a 500 with the request id and the organization', async () => {
    const res = await t.call('GET', '/log-probe/boom');
    await expectStatus(res, 500);
    const error = linesOf(res).find((l) => l.msg === 'request failed');
    expect(error).toMatchObject({
      level: 'error',
      request_id: res.headers.get('x-request-id'),
      org_id: t.org.id,
      path: '/log-probe/boom',
      err: { message: 'kaput' },
    });
    expect(requestLine(res)).toMatchObject({ org_id: t.org.id, status: 500 });
  });
});
